/**
 * The proxyless RBAC filters enforced by a real gRPC server: a grpc-js server on 127.0.0.1 with
 * mutual TLS, running grpc-js-xds's RBAC server filter (each filter config parsed by the library,
 * then made into a server interceptor by its own createServerHttpFilter, DENY before ALLOW), and
 * real grpc-js clients whose certificates edgepilot's CA issued (lib/ca: a self-signed root, SPIFFE
 * leaves). The certificates are issued at the wall clock's time because TLS checks them against it.
 */
import { Client, credentials, Server, ServerCredentials, type ServiceError, status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportPrivateKeyPem } from "../../../../lib/ca/private-key.ts";
import { loadOrCreateRoot } from "../../../../lib/ca/self-signed.ts";
import { signCsr } from "../../../../lib/ca/sign.ts";
import { buildGrpcAuthzFilters } from "../../../../lib/resources/authz/index.ts";
import { createMemoryStore } from "../../../../lib/store/memory.ts";
import { csrPem, day, keyPair } from "../../ca/builders.ts";
import { type PolicyInput, workloadPolicies } from "./support.ts";

type Interceptor = NonNullable<ConstructorParameters<typeof Server>[0]>["interceptors"] extends
  | (infer I)[]
  | undefined
  ? I
  : never;
type HttpFilterModule = {
  parseTopLevelFilterConfig(encoded: unknown, client: boolean): { typeUrl: string } | null;
  createServerHttpFilter(config: { typeUrl: string }, overrides: Map<string, unknown>): Interceptor | null;
};

const flagBefore = process.env.GRPC_XDS_EXPERIMENTAL_RBAC;
const policies: PolicyInput[] = [
  { name: "allow-foo", spec: { rules: [{ from: [{ source: { namespaces: ["foo"] } }] }] } },
  {
    name: "no-delete",
    spec: { action: "DENY", rules: [{ to: [{ operation: { paths: ["/pkg.Svc/Delete"] } }] }] },
  },
];

let server: Server;
let port = 0;
let rootPem = "";
const identities: Record<string, { keyPem: string; certPem: string }> = {};

/** A key and a certificate chain for `spiffe`, issued by the CA's root. */
async function issue(bundle: Parameters<typeof signCsr>[0], spiffe: string) {
  const keys = await keyPair();
  const signed = await signCsr(
    bundle,
    {
      csrPem: await csrPem({ sans: [{ type: "url", value: spiffe }], keys }),
      identity: spiffe,
      requestedMs: day,
    },
    { defaultMs: day, maxMs: day },
    Date.now(),
  );
  if (!signed.ok) throw new Error(signed.error.message);
  return { keyPem: await exportPrivateKeyPem(keys.privateKey), certPem: signed.certChain.join("") };
}

const passthrough = (b: Buffer) => b;
const method = (path: string) => ({
  path,
  requestStream: false,
  responseStream: false,
  requestSerialize: passthrough,
  requestDeserialize: passthrough,
  responseSerialize: passthrough,
  responseDeserialize: passthrough,
});

beforeAll(async () => {
  process.env.GRPC_XDS_EXPERIMENTAL_RBAC = "true";
  (await import("@grpc/grpc-js-xds")).register();
  const lib = (await import("@grpc/grpc-js-xds/build/src/http-filter.js")) as unknown as HttpFilterModule;
  const interceptors = buildGrpcAuthzFilters({
    policies: workloadPolicies(policies),
    trustDomains: ["cluster.local"],
  }).map((f) => {
    if (f.configType.case !== "typedConfig") throw new Error("filter without typed_config");
    const any = f.configType.value;
    const parsed = lib.parseTopLevelFilterConfig(
      { type_url: any.typeUrl, value: Buffer.from(any.value) },
      false,
    );
    const interceptor = parsed && lib.createServerHttpFilter(parsed, new Map());
    if (!interceptor) throw new Error(`grpc-js refused ${f.name}`);
    return interceptor;
  });
  expect(interceptors).toHaveLength(2);

  const { bundle } = await loadOrCreateRoot(createMemoryStore(), {
    trustDomain: "cluster.local",
    ttlMs: day,
    now: Date.now() - 60_000,
  });
  rootPem = bundle.rootCertPem;
  for (const [name, id] of [
    ["server", "spiffe://cluster.local/ns/foo/sa/server"],
    ["client", "spiffe://cluster.local/ns/foo/sa/client"],
    ["stranger", "spiffe://cluster.local/ns/bar/sa/stranger"],
  ] as const) {
    identities[name] = await issue(bundle, id);
  }
  const self = identities.server as { keyPem: string; certPem: string };

  server = new Server({ interceptors });
  server.addService(
    { Get: method("/pkg.Svc/Get"), Delete: method("/pkg.Svc/Delete") },
    {
      Get: (_call: unknown, done: (e: null, b: Buffer) => void) => done(null, Buffer.from("got")),
      Delete: (_call: unknown, done: (e: null, b: Buffer) => void) => done(null, Buffer.from("deleted")),
    },
  );
  const creds = ServerCredentials.createSsl(
    Buffer.from(rootPem),
    [{ private_key: Buffer.from(self.keyPem), cert_chain: Buffer.from(self.certPem) }],
    true,
  );
  port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", creds, (err, p) => (err ? reject(err) : resolve(p))),
  );
});

afterAll(() => {
  server?.forceShutdown();
  if (flagBefore === undefined) delete process.env.GRPC_XDS_EXPERIMENTAL_RBAC;
  else process.env.GRPC_XDS_EXPERIMENTAL_RBAC = flagBefore;
});

/** One unary call as `who`: the response text, or the status code it failed with. */
async function call(who: string, path: string): Promise<string | status> {
  const id = identities[who] as { keyPem: string; certPem: string };
  const client = new Client(
    `127.0.0.1:${port}`,
    credentials.createSsl(Buffer.from(rootPem), Buffer.from(id.keyPem), Buffer.from(id.certPem), {
      // The server's certificate names a SPIFFE identity, not a host name.
      checkServerIdentity: () => undefined,
    }),
  );
  try {
    return await new Promise<string | status>((resolve) =>
      client.makeUnaryRequest(
        path,
        passthrough,
        passthrough,
        Buffer.alloc(0),
        (err: ServiceError | null, res?: Buffer) => resolve(err ? err.code : (res?.toString() ?? "")),
      ),
    );
  } finally {
    client.close();
  }
}

describe("a grpc-js server enforcing the proxyless RBAC filters over mTLS", () => {
  it("allows the namespace the ALLOW policy names", async () => {
    expect(await call("client", "/pkg.Svc/Get")).toBe("got");
  });

  it("denies what the DENY policy matches, even for an allowed peer", async () => {
    expect(await call("client", "/pkg.Svc/Delete")).toBe(status.PERMISSION_DENIED);
  });

  it("denies a peer of another namespace", async () => {
    expect(await call("stranger", "/pkg.Svc/Get")).toBe(status.PERMISSION_DENIED);
  });
});
