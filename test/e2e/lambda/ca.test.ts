/**
 * IstioCertificateService on the Lambda xDS function, through the local invoke harness (function
 * URL, response streaming) over DynamoDB (dynalite): CreateCertificate over Connect (binary and
 * JSON) and gRPC-Web with service-account JWTs for istio-ca, the chain checked as on Node and the
 * Worker (test/e2e/ca/chain.ts), the refusals every host answers alike (test/e2e/ca/refusals.ts),
 * istiod's counters on /metrics; two containers cold-starting together over an empty table agree on
 * one self-signed root (the conditional write); a plug-in CA from the four variables.
 */
import "reflect-metadata";
import { Code, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { X509Certificate } from "@peculiar/x509";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PluginCaValues } from "../../../functions/ca-variables.ts";
import { createXdsHandler } from "../../../functions/lambda/xds-host.ts";
import type { StoredCaRoot } from "../../../lib/ca/self-signed.ts";
import { createDynamoStore } from "../../../lib/store/dynamodb.ts";
import { keys as storeKeys } from "../../../lib/store/keys.ts";
import type { Store } from "../../../lib/store/store.ts";
import { type RunningDynalite, startDynalite } from "../../support/dynalite.ts";
import { type LambdaHarness, startLambdaHarness } from "../../support/lambda-harness.ts";
import { claims, issuer, jwksOf, makeKeys, sign, type TestKeys } from "../../unit/auth/tokens.ts";
import { csrPem, pluginCa, productpage } from "../../unit/ca/builders.ts";
import { type CaOutcome, checkIssuedChain } from "../ca/chain.ts";
import { createCertificateOver } from "../ca/connect-call.ts";
import { caRefusals } from "../ca/refusals.ts";
import { lambdaTestConfig } from "./support.ts";

let keys: TestKeys;
let dynalite: RunningDynalite;
let tables = 0;

/** A token for default/productpage valid now (the harness runs on the real clock), for `aud`. */
const mint = (aud: string[] = ["istio-ca"], overrides: Record<string, unknown> = {}) => {
  const t = Math.floor(Date.now() / 1000);
  return sign(keys, "ES256", claims({ aud, iat: t, nbf: t - 5, exp: t + 600, ...overrides }));
};

/** A store over a fresh table of the one dynalite. */
async function freshStore(): Promise<Store> {
  const table = `ca-${++tables}`;
  await dynalite.createTable(table);
  return createDynamoStore({ client: dynalite.client(), table });
}

/** The xDS function (its containers built by createXdsHandler) with XDS_AUTH=jwt, over `store`. */
async function startXds(store: Store, lines: string[], caVariables?: PluginCaValues): Promise<LambdaHarness> {
  const config = lambdaTestConfig({
    XDS_AUTH: "jwt",
    XDS_JWT_ISSUER: issuer,
    XDS_JWT_AUDIENCE: "edgepilot",
    XDS_JWKS: await jwksOf(keys),
    DEFAULT_WORKLOAD_CERT_TTL: "12h",
    MAX_WORKLOAD_CERT_TTL: "48h",
  });
  const log = (line: string) => void lines.push(line);
  return startLambdaHarness([
    {
      name: "xds",
      url: true,
      timeoutMs: 10_000,
      load: async () => createXdsHandler({ config, log, store, ...(caVariables && { caVariables }) }),
    },
  ]);
}

type Via = "connect" | "connect-json" | "grpc-web";

function transport(harness: LambdaHarness, via: Via): Transport {
  const baseUrl = harness.url("xds");
  return via === "grpc-web"
    ? createGrpcWebTransport({ baseUrl, httpVersion: "1.1" })
    : createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: via === "connect" });
}

/** CreateCertificate on the function's URL; a refusal is its code and raw message. */
async function call(
  harness: LambdaHarness,
  token: string | undefined,
  req: { csr: string; validityDuration?: bigint },
  via: Via = "connect",
): Promise<CaOutcome> {
  return createCertificateOver(transport(harness, via), token, req);
}

/** The PEM of a certificate, normalized (a stored PEM may end in a newline). */
const pemOf = (pem: string) => new X509Certificate(pem).toString("pem");

beforeAll(async () => {
  keys = await makeKeys();
  dynalite = await startDynalite();
});
afterAll(async () => {
  // The containers' DynamoDB clients keep their connections: dynalite's close is given a moment.
  await Promise.race([dynalite?.stop(), new Promise((r) => setTimeout(r, 200))]);
});

describe("CreateCertificate on the Lambda xDS function, self-signed root in DynamoDB", () => {
  let harness: LambdaHarness;
  let store: Store;
  const lines: string[] = [];
  beforeAll(async () => {
    store = await freshStore();
    harness = await startXds(store, lines);
  });
  afterAll(() => harness?.close());

  it.each([
    ["Connect", "connect"],
    ["Connect JSON", "connect-json"],
    ["gRPC-Web", "grpc-web"],
  ] as const)("signs a CSR over %s: SAN from the token only, chained to the root stored under ca/root", async (_, via) => {
    const certs = await checkIssuedChain(
      await call(harness, await mint(), { csr: await csrPem(), validityDuration: 3600n }, via),
      productpage,
    );
    expect(certs).toHaveLength(2);
    const leaf = certs[0] as X509Certificate;
    expect(leaf.notAfter.getTime() - Date.now()).toBeLessThanOrEqual(3_600_000 + 1000);
    expect(leaf.notAfter.getTime() - Date.now()).toBeGreaterThan(3_600_000 - 60_000);
    const stored = await store.get<StoredCaRoot>(storeKeys.caRoot());
    expect(certs[1]?.toString("pem")).toBe(pemOf(stored?.value.certPem ?? ""));
  });

  it("logs at cold start what it signs with", () => {
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^ca: IstioCertificateService\/CreateCertificate signs with the self-signed root generated now and stored .* for istio-ca$/,
      ),
    );
  });

  // The requests test/e2e/ca (Node) and test/workers/ca.test.ts send, with the answers they expect.
  const refusals = caRefusals({
    mint,
    csr: (san) => csrPem(san === undefined ? {} : { sans: [{ type: "url", value: san }] }),
  });
  it.each(
    refusals,
  )("refuses %s, as Node and the Worker do", async (_name, token, csr, validityDuration, code, message) => {
    const outcome = await call(harness, await token(), { csr: await csr(), validityDuration });
    expect(outcome).toMatchObject({ code, message: expect.stringMatching(message) });
  });

  it("counts issuances and refusals in istiod's citadel_server_* metrics on /metrics", async () => {
    const res = await fetch(`${harness.url("xds")}/metrics`, {
      headers: { authorization: `Bearer ${await mint(["edgepilot"])}` },
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? Number.NaN);
    // One container served every call so far (they ran one at a time).
    expect(harness.stats("xds").containers).toBe(1);
    expect(value("citadel_server_success_cert_issuance_count")).toBe(3);
    expect(value("citadel_server_csr_count")).toBe(3 + refusals.length);
    expect(value("citadel_server_authentication_failure_count")).toBe(
      refusals.filter((r) => r[4] === Code.Unauthenticated).length,
    );
    expect(value("citadel_server_root_cert_expiry_timestamp")).toBeGreaterThan(Date.now() / 1000);
  });
});

describe("two containers cold-starting together over an empty table", () => {
  it("agree on one root: one stores it, the other's conditional write is refused and it reads the winner's", async () => {
    const store = await freshStore();
    // Both containers read ca/root before either writes it, so both generate a root and race to store it.
    let arrived = 0;
    let release: () => void = () => undefined;
    const bothRead = new Promise<void>((r) => {
      release = r;
    });
    const racing: Store = {
      ...store,
      async get<T>(key: string) {
        const entry = await store.get<T>(key);
        if (key === storeKeys.caRoot() && arrived < 2) {
          if (++arrived === 2) release();
          await bothRead;
        }
        return entry;
      },
    };
    const lines: string[] = [];
    const harness = await startXds(racing, lines);
    try {
      const outcomes = await Promise.all(
        [0, 1].map(async () => call(harness, await mint(), { csr: await csrPem(), validityDuration: 3600n })),
      );
      expect(harness.stats("xds").containers).toBe(2);
      const roots = await Promise.all(
        outcomes.map(async (o) => (await checkIssuedChain(o, productpage)).at(-1)?.toString("pem")),
      );
      const stored = await store.get<StoredCaRoot>(storeKeys.caRoot());
      expect(roots).toEqual([pemOf(stored?.value.certPem ?? ""), pemOf(stored?.value.certPem ?? "")]);
      const signsWith = lines.filter((l) =>
        l.startsWith("ca: IstioCertificateService/CreateCertificate signs with"),
      );
      expect(
        signsWith.filter((l) => l.includes("the self-signed root generated now and stored")),
      ).toHaveLength(1);
      expect(signsWith.filter((l) => l.includes("the self-signed root from the store"))).toHaveLength(1);
    } finally {
      await harness.close();
    }
  });
});

describe("a CreateCertificate call on a container whose mesh core is still starting", () => {
  it("is answered: the CA reads only ca/root and the mesh config record, never the mesh state the core loads", async () => {
    const store = await freshStore();
    // Everything but the CA's keys (its root; the MeshConfig for the trust domain) waits forever, so the core's start never ends.
    const stuck = new Promise<never>(() => undefined);
    const ca = (key: string) => key.startsWith(storeKeys.caRoot()) || key === storeKeys.meshConfig();
    const meshless: Store = {
      get: (key) => (ca(key) ? store.get(key) : stuck),
      getMany: () => stuck,
      put: (key, value, options) => (ca(key) ? store.put(key, value, options) : stuck),
      delete: () => stuck,
      list: () => stuck,
    };
    const harness = await startXds(meshless, []);
    try {
      await checkIssuedChain(
        await call(harness, await mint(), { csr: await csrPem(), validityDuration: 3600n }),
        productpage,
      );
    } finally {
      await harness.close();
    }
  });
});

describe("CreateCertificate on the Lambda xDS function with a plug-in CA", () => {
  it("signs under CA_CERT_PEM and answers with CERT_CHAIN_PEM and ROOT_CERT_PEM; nothing is stored", async () => {
    const ca = await pluginCa({ from: Date.now() - 3_600_000 });
    const store = await freshStore();
    const lines: string[] = [];
    const harness = await startXds(store, lines, {
      CA_CERT_PEM: ca.files["ca-cert.pem"],
      CA_KEY_PEM: ca.files["ca-key.pem"],
      CERT_CHAIN_PEM: ca.files["cert-chain.pem"],
      ROOT_CERT_PEM: ca.files["root-cert.pem"],
    });
    try {
      const certs = await checkIssuedChain(
        await call(harness, await mint(), { csr: await csrPem(), validityDuration: 3600n }),
        productpage,
      );
      // leaf, cert-chain.pem's intermediate and root, root-cert.pem
      expect(certs.map((c) => c.toString("pem"))).toEqual([
        certs[0]?.toString("pem"),
        pemOf(ca.intermediatePem),
        pemOf(ca.rootPem),
        pemOf(ca.rootPem),
      ]);
      expect(lines).toContainEqual(
        expect.stringMatching(
          /^ca: .* signs with the plug-in CA of CA_CERT_PEM, CA_KEY_PEM, CERT_CHAIN_PEM, ROOT_CERT_PEM /,
        ),
      );
      expect(await store.get(storeKeys.caRoot())).toBeUndefined();
    } finally {
      await harness.close();
    }
  });

  it("set in part: answers FailedPrecondition naming the missing variables, and xDS still serves", async () => {
    const lines: string[] = [];
    const harness = await startXds(await freshStore(), lines, { CA_CERT_PEM: "x" });
    try {
      expect(await call(harness, await mint(), { csr: await csrPem() })).toEqual({
        code: Code.FailedPrecondition,
        message: expect.stringMatching(
          /^the certificate authority is not configured: the plug-in CA: CA_KEY_PEM, CERT_CHAIN_PEM, ROOT_CERT_PEM not set/,
        ),
      });
      expect(
        lines.filter((l) => l.includes("ca: IstioCertificateService is not served: the plug-in CA")),
      ).toHaveLength(1);
      expect((await fetch(`${harness.url("xds")}/ready`)).status).toBe(200);
    } finally {
      await harness.close();
    }
  });
});
