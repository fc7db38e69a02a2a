/**
 * The agent's workload certificates end to end: a real Node edgepilot (child process, `npm start`'s
 * entry) with its CA on (XDS_AUTH=jwt, the self-signed root) and the agent in this process with a
 * service-account token for istio-ca. A real @grpc/grpc-js client of SDS on the agent's Unix socket
 * gets `default` (chain and key) and `ROOTCA`; the chain verifies to the root and names the token's
 * identity only; with SECRET_TTL=6s the certificate is renewed at half its life and pushed as a new
 * version while the old one is still valid. The proxyless files appear and grpc-js's file_watcher
 * provider, configured from the bootstrap the agent prints, loads them; the two ends of a TLS
 * connection made from them verify each other. Run with the CA reached over gRPC (an ADS upstream)
 * and over Connect (a Watch upstream on XDS_PORT, a Poll upstream over HTTP/1.1 on PORT). Takes a few seconds: a real rotation is the point of it.
 */
import "reflect-metadata";
import { createPrivateKey, X509Certificate as NodeX509 } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer as createTlsServer, type TLSSocket, connect as tlsConnect } from "node:tls";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import * as grpc from "@grpc/grpc-js";
import { validateBootstrapConfig } from "@grpc/grpc-js-xds/build/src/xds-bootstrap.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningAgent, startAgent } from "../../../functions/node/agent-runtime.ts";
import { grpcBootstrap } from "../../../lib/agent/bootstrap.ts";
import { parseAgentConfig } from "../../../lib/agent/config.ts";
import { secretTypeUrl } from "../../../lib/agent/sds-session.ts";
import { splitPemCertificates } from "../../../lib/ca/bundle.ts";
import {
  type Secret,
  SecretSchema,
} from "../../../lib/gen/envoy/extensions/transport_sockets/tls/v3/secret_pb.ts";
import {
  type DiscoveryRequest,
  DiscoveryRequestSchema,
  type DiscoveryResponse,
  DiscoveryResponseSchema,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { claims, jwksOf, makeKeys, sign } from "../../unit/auth/tokens.ts";
import { checkIssuedChain } from "../ca/chain.ts";
import { type RunningControlPlane, startControlPlane } from "../support/runtime.ts";
import { eventually } from "./support.ts";

const identity = "spiffe://cluster.local/ns/default/sa/productpage";
const streamSecrets = "/envoy.service.secret.v3.SecretDiscoveryService/StreamSecrets";
let cp: RunningControlPlane;
let dir: string;

beforeAll(async () => {
  const keys = await makeKeys();
  dir = mkdtempSync(join(tmpdir(), "edgepilot-agent-certs-"));
  writeFileSync(join(dir, "jwks.json"), await jwksOf(keys));
  const t = Math.floor(Date.now() / 1000);
  // The projected token for istio-ca, as kubelet writes it.
  writeFileSync(
    join(dir, "istio-token"),
    await sign(keys, "ES256", claims({ aud: ["istio-ca"], iat: t, nbf: t - 5, exp: t + 3600 })),
  );
  cp = await startControlPlane({
    XDS_AUTH: "jwt",
    XDS_JWT_ISSUER: claims().iss as string,
    XDS_JWT_AUDIENCE: "edgepilot",
    XDS_JWKS_FILE: join(dir, "jwks.json"),
  });
});

afterAll(async () => {
  await cp?.stop();
});

/** One SDS response as the test saw it: when, its version, its Secrets by name. */
interface Seen {
  at: number;
  version: string;
  secrets: Map<string, Secret>;
}

/** A real gRPC SDS stream on `socket`, as Envoy opens it: asks for `default` and `ROOTCA`, ACKs each response. */
function sdsClient(socket: string) {
  const client = new grpc.Client(`unix:${socket}`, grpc.credentials.createInsecure());
  const call = client.makeBidiStreamRequest(
    streamSecrets,
    (m: DiscoveryRequest) => Buffer.from(toBinary(DiscoveryRequestSchema, m)),
    (b: Buffer) => fromBinary(DiscoveryResponseSchema, b),
  );
  const seen: Seen[] = [];
  let failure = "";
  call.on("data", (res: DiscoveryResponse) => {
    const secrets = new Map<string, Secret>();
    for (const r of res.resources) {
      const s = anyUnpack(r, SecretSchema);
      if (s) secrets.set(s.name, s);
    }
    seen.push({ at: Date.now(), version: res.versionInfo, secrets });
    call.write(
      create(DiscoveryRequestSchema, {
        typeUrl: secretTypeUrl,
        versionInfo: res.versionInfo,
        responseNonce: res.nonce,
        resourceNames: ["default", "ROOTCA"],
      }),
    );
  });
  call.on("error", (e: Error) => {
    failure = e.message;
  });
  call.write(
    create(DiscoveryRequestSchema, {
      node: { id: "sidecar~127.0.0.9~productpage-1.default~default.svc.cluster.local" },
      typeUrl: secretTypeUrl,
      resourceNames: ["default", "ROOTCA"],
    }),
  );
  return {
    seen,
    failure: () => failure,
    close() {
      call.cancel();
      client.close();
    },
  };
}

const bytes = (b: { specifier: { value?: unknown } } | undefined) =>
  new TextDecoder().decode(b?.specifier.value as Uint8Array);

/** The `default` Secret's chain and key, and `ROOTCA`'s root, checked as one certificate of `identity`. */
async function checkSeen(s: Seen): Promise<{ chain: string; key: string; root: string; notAfter: number }> {
  const def = s.secrets.get("default")?.type;
  const root = s.secrets.get("ROOTCA")?.type;
  if (def?.case !== "tlsCertificate" || root?.case !== "validationContext")
    throw new Error("not Istio's two secrets");
  const chain = bytes(def.value.certificateChain);
  const key = bytes(def.value.privateKey);
  const rootPem = bytes(root.value.trustedCa);
  const certs = await checkIssuedChain({ chain: splitPemCertificates(chain) }, identity);
  expect(splitPemCertificates(rootPem)).toEqual([splitPemCertificates(chain).at(-1)]);
  const leaf = new NodeX509(chain);
  expect(leaf.checkPrivateKey(createPrivateKey(key))).toBe(true);
  return { chain, key, root: rootPem, notAfter: (certs[0] as { notAfter: Date }).notAfter.getTime() };
}

/** A TLS connection whose two ends present `a` and `b`, each requiring the other's chain to `root`: the peer's SAN. */
async function mutualTls(
  a: { cert: string; key: string },
  b: { cert: string; key: string },
  root: string,
): Promise<string> {
  const server = createTlsServer({ ...a, ca: root, requestCert: true, rejectUnauthorized: true }, (s) =>
    s.end("ok"),
  );
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  try {
    return await new Promise<string>((resolve, reject) => {
      const socket: TLSSocket = tlsConnect(
        // No DNS name to check: a SPIFFE certificate is checked by its URI SAN, below.
        { port, host: "127.0.0.1", ...b, ca: root, checkServerIdentity: () => undefined },
        () => resolve(socket.getPeerX509Certificate()?.subjectAltName ?? ""),
      );
      socket.on("error", reject);
    });
  } finally {
    server.close();
  }
}

for (const [name, protocol, http, onPort] of [
  ["over gRPC (an ADS upstream)", "ads", "2", "xdsPort"],
  ["over Connect (a Watch upstream)", "watch", "2", "xdsPort"],
  ["over Connect on HTTP/1.1 (a Poll upstream on PORT)", "poll", "1.1", "port"],
] as const)
  describe(`workload certificates from the upstream's CA ${name}`, () => {
    let agent: RunningAgent;
    let sds: ReturnType<typeof sdsClient>;
    const lines: string[] = [];
    let work: string;

    beforeAll(async () => {
      work = mkdtempSync(join(dir, `${protocol}-`));
      const parsed = parseAgentConfig(
        {
          EDGEPILOT_AGENT_UPSTREAM: `http://127.0.0.1:${cp[onPort]}`,
          EDGEPILOT_AGENT_UPSTREAM_PROTOCOL: protocol,
          EDGEPILOT_AGENT_UPSTREAM_HTTP: http,
          POD_NAMESPACE: "default",
          SERVICE_ACCOUNT: "productpage",
          EDGEPILOT_CA_TOKEN_FILE: join(dir, "istio-token"),
          SECRET_TTL: "6s",
          EDGEPILOT_AGENT_SDS_SOCKET: join(work, "workload-spiffe-uds", "socket"),
          OUTPUT_CERTS: join(work, "certs"),
          EDGEPILOT_AGENT_PORT: "0",
          EDGEPILOT_AGENT_READY_PORT: "0",
        },
        [],
      );
      if (parsed.ok !== true) throw new Error(JSON.stringify(parsed));
      agent = await startAgent(parsed.config, { log: (l) => lines.push(l) });
      sds = sdsClient(join(work, "workload-spiffe-uds", "socket"));
    });
    afterAll(async () => {
      sds?.close();
      await agent?.stop();
    });
    const context = () => `${lines.join("\n")}\nSDS: ${sds.failure()}`;

    it("serves default and ROOTCA over SDS: the token's identity, chained to the root, the key its own", async () => {
      await eventually(() => sds.seen.length > 0, "a first SDS response", context);
      const first = sds.seen[0] as Seen;
      expect(first.version).toBe("1");
      const got = await checkSeen(first);
      expect(got.notAfter - Date.now()).toBeLessThanOrEqual(6000);
      expect(lines.join("\n")).toMatch(
        new RegExp(
          `workload certificates for ${identity} from http://127.0.0.1:${cp[onPort]} \\(${protocol === "ads" ? "grpc" : "connect"}\\)`,
        ),
      );
    });

    it("renews at half the lifetime and pushes the new version before the old one expires", async () => {
      await eventually(() => sds.seen.length > 1, "a renewed certificate pushed over SDS", context, 15_000);
      const [first, second] = sds.seen as [Seen, Seen];
      expect(second.version).toBe("2");
      const old = await checkSeen(first);
      const renewed = await checkSeen(second);
      expect(renewed.chain).not.toBe(old.chain);
      expect(renewed.key).not.toBe(old.key);
      // No gap: the new certificate was in hand while the old one was still valid.
      expect(second.at).toBeLessThan(old.notAfter);
      expect(sds.failure()).toBe("");
    });

    it("writes the proxyless files, which grpc-js's file_watcher provider loads from the agent's bootstrap", async () => {
      const certDir = join(work, "certs");
      await eventually(() => existsSync(join(certDir, "cert-chain.pem")), "OUTPUT_CERTS files", context);
      const bootstrap = grpcBootstrap({
        generator: "grpc",
        podIp: "127.0.0.9",
        podName: "productpage-1",
        namespace: "default",
        domainSuffix: "cluster.local",
        serverUri: `127.0.0.1:${agent.port}`,
        locality: { region: "", zone: "", subZone: "" },
        certDir,
      });
      const provider = validateBootstrapConfig(bootstrap).certificateProviders.default;
      if (!provider) throw new Error("no default certificate provider");
      const watcher = new grpc.experimental.FileWatcherCertificateProvider(provider.config);
      const identityUpdate = await new Promise<{ certificate: Buffer; privateKey: Buffer }>((resolve) =>
        watcher.addIdentityCertificateListener((u) => u && resolve(u)),
      );
      const caUpdate = await new Promise<{ caCertificate: Buffer }>((resolve) =>
        watcher.addCaCertificateListener((u) => u && resolve(u)),
      );
      const files = {
        cert: identityUpdate.certificate.toString(),
        key: identityUpdate.privateKey.toString(),
        root: caUpdate.caCertificate.toString(),
      };
      expect(files.cert).toBe(readFileSync(join(certDir, "cert-chain.pem"), "utf8"));
      await checkIssuedChain({ chain: splitPemCertificates(files.cert) }, identity);
      expect(new NodeX509(files.cert).checkPrivateKey(createPrivateKey(files.key))).toBe(true);
      // The files are a certificate mTLS takes: both ends present it and verify the other's.
      expect(
        await mutualTls(
          { cert: files.cert, key: files.key },
          { cert: files.cert, key: files.key },
          files.root,
        ),
      ).toBe(`URI:${identity}`);
    });

    it("stops with an SDS stream open: the stream ends and the socket is removed", async () => {
      const socket = join(work, "workload-spiffe-uds", "socket");
      const started = Date.now();
      await agent.stop();
      expect(Date.now() - started).toBeLessThan(3000);
      expect(existsSync(socket)).toBe(false);
      await eventually(() => sds.failure() !== "", "the SDS stream ended", context);
    });
  });
