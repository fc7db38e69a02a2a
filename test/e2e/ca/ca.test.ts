/**
 * IstioCertificateService on the Node runtime (the real child process), with XDS_AUTH=jwt keys
 * from XDS_JWKS_FILE: a real @grpc/grpc-js client on XDS_PORT and a Connect client over HTTP/1.1
 * on PORT call CreateCertificate with service-account JWTs for istio-ca. The chain is checked with
 * @peculiar/x509: the SAN is the token's SPIFFE ID only, the leaf verifies to the answer's root,
 * the validity is the one asked for. Refusals carry istiod's codes and are counted in /metrics.
 * Runs with a plug-in CA (ROOT_CA_DIR) and with the self-signed root kept in a file store.
 */
import "reflect-metadata";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, fromBinary, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import * as grpc from "@grpc/grpc-js";
import type { X509Certificate } from "@peculiar/x509";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type IstioCertificateRequest,
  IstioCertificateRequestSchema,
  type IstioCertificateResponse,
  IstioCertificateResponseSchema,
} from "../../../lib/gen/istio/v1/auth/ca_pb.ts";
import { claims, jwksOf, makeKeys, sign, type TestKeys } from "../../unit/auth/tokens.ts";
import { csrPem, pluginCa } from "../../unit/ca/builders.ts";
import { type RunningControlPlane, startControlPlane } from "../support/runtime.ts";
import { type CaOutcome, checkIssuedChain } from "./chain.ts";
import { createCertificateOver } from "./connect-call.ts";
import { caRefusals } from "./refusals.ts";

const productpage = "spiffe://cluster.local/ns/default/sa/productpage";
const path = "/istio.v1.auth.IstioCertificateService/CreateCertificate";
let keys: TestKeys;
let dir: string;

/** A token for default/productpage valid now (the child process has the real clock), for `aud`. */
const mint = (aud: string[] = ["istio-ca"], overrides: Record<string, unknown> = {}) => {
  const t = Math.floor(Date.now() / 1000);
  return sign(keys, "ES256", claims({ aud, iat: t, nbf: t - 5, exp: t + 600, ...overrides }));
};

beforeAll(async () => {
  keys = await makeKeys();
  dir = mkdtempSync(join(tmpdir(), "edgepilot-ca-"));
  writeFileSync(join(dir, "jwks.json"), await jwksOf(keys));
});

const jwtEnv = () => ({
  XDS_AUTH: "jwt",
  XDS_JWT_ISSUER: claims().iss as string,
  XDS_JWT_AUDIENCE: "edgepilot",
  XDS_JWKS_FILE: join(dir, "jwks.json"),
});

/** CreateCertificate with @grpc/grpc-js over h2c on XDS_PORT. */
function grpcCall(
  port: number,
  token: string | undefined,
  req: MessageInitShape<typeof IstioCertificateRequestSchema>,
): Promise<CaOutcome> {
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const md = new grpc.Metadata();
  if (token !== undefined) md.set("authorization", `Bearer ${token}`);
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      path,
      (m: IstioCertificateRequest) => Buffer.from(toBinary(IstioCertificateRequestSchema, m)),
      (b: Buffer) => fromBinary(IstioCertificateResponseSchema, b),
      create(IstioCertificateRequestSchema, req),
      md,
      { deadline: Date.now() + 10_000 },
      (err: grpc.ServiceError | null, res?: IstioCertificateResponse) => {
        client.close();
        resolve(err ? { code: err.code, message: err.details } : { chain: res?.certChain ?? [] });
      },
    );
  });
}

/** CreateCertificate with a Connect client over HTTP/1.1 on PORT. */
function connectCall(
  port: number,
  token: string | undefined,
  req: MessageInitShape<typeof IstioCertificateRequestSchema>,
): Promise<CaOutcome> {
  return createCertificateOver(
    createConnectTransport({ baseUrl: `http://127.0.0.1:${port}`, httpVersion: "1.1" }),
    token,
    req,
  );
}

/** Checks an issued chain (checkIssuedChain) and that the leaf lives `lifetimeMs` from now. */
async function checkChain(outcome: CaOutcome, lifetimeMs: number): Promise<X509Certificate[]> {
  const certs = await checkIssuedChain(outcome, productpage);
  const lifetime = (certs[0] as X509Certificate).notAfter.getTime() - Date.now();
  expect(lifetime).toBeGreaterThan(lifetimeMs - 60_000);
  expect(lifetime).toBeLessThanOrEqual(lifetimeMs + 1000);
  return certs;
}

/** The suite both CA sources run: issuance over both transports, refusals, metrics. */
function describeCa(name: string, start: () => Promise<RunningControlPlane>, chainLength: number) {
  describe(name, () => {
    let cp: RunningControlPlane;
    beforeAll(async () => {
      cp = await start();
    });
    afterAll(async () => {
      await cp?.stop();
    });

    it("says at start-up what it signs with", () => {
      expect(cp.output()).toMatch(
        /ca: IstioCertificateService\/CreateCertificate signs with .* for istio-ca/,
      );
    });

    it("issues over gRPC (XDS_PORT): SAN from the token, chained to the root, the TTL asked for", async () => {
      const certs = await checkChain(
        await grpcCall(cp.xdsPort, await mint(), { csr: await csrPem(), validityDuration: 3600n }),
        3_600_000,
      );
      expect(certs).toHaveLength(chainLength);
    });

    it("issues over Connect (PORT, HTTP/1.1) with the default TTL when none is asked", async () => {
      const certs = await checkChain(
        await connectCall(cp.port, await mint(), { csr: await csrPem() }),
        12 * 3_600_000,
      );
      expect(certs).toHaveLength(chainLength);
    });

    const refusals = caRefusals({
      mint,
      csr: (san) => csrPem(san === undefined ? {} : { sans: [{ type: "url", value: san }] }),
    });
    for (const [call, via] of [
      ["gRPC", () => cp.xdsPort],
      ["Connect", () => cp.port],
    ] as const)
      it.each(
        refusals,
      )(`refuses %s (${call})`, async (_name, token, csr, validityDuration, code, message) => {
        const req = { csr: await csr(), validityDuration };
        const outcome =
          call === "gRPC"
            ? await grpcCall(via(), await token(), req)
            : await connectCall(via(), await token(), req);
        expect(outcome).toMatchObject({ code, message: expect.stringMatching(message) });
      });

    it("logs refusals and counts everything as istiod does", async () => {
      expect(cp.output()).toMatch(/ca: refused CreateCertificate: invalid token: token expired at/);
      expect(cp.output()).toMatch(
        /ca: CSR signing error for spiffe:\/\/cluster.local\/ns\/default\/sa\/productpage \(CSR_ERROR\)/,
      );
      const res = await fetch(`http://127.0.0.1:${cp.port}/metrics`, {
        headers: { authorization: `Bearer ${await mint(["edgepilot"])}` },
      });
      const text = await res.text();
      const value = (line: string) => Number(new RegExp(`^${line} (\\S+)$`, "m").exec(text)?.[1]);
      expect(value("citadel_server_csr_count")).toBe(2 + 2 * refusals.length);
      expect(value("citadel_server_success_cert_issuance_count")).toBe(2);
      expect(value("citadel_server_authentication_failure_count")).toBe(
        2 * refusals.filter((r) => r[4] === Code.Unauthenticated).length,
      );
      expect(value('citadel_server_csr_sign_err_count\\{error="CSR_ERROR"\\}')).toBe(4);
      expect(value('citadel_server_csr_sign_err_count\\{error="TTL_ERROR"\\}')).toBe(2);
      expect(value("citadel_server_root_cert_expiry_timestamp")).toBeGreaterThan(Date.now() / 1000);
    });

    it("answers docs/tasks/certificates.md's openssl CSR sent as Connect JSON (curl's request)", async () => {
      const work = mkdtempSync(join(tmpdir(), "edgepilot-ca-docs-"));
      // biome-ignore format: the page's command, argument for argument
      execFileSync("openssl", ["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", join(work, "key.pem"), "-subj", "/CN=productpage", "-addext", `subjectAltName=URI:${productpage}`, "-out", join(work, "csr.pem")], { stdio: "ignore" });
      const res = await fetch(`http://127.0.0.1:${cp.port}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${await mint()}` },
        body: JSON.stringify({ csr: readFileSync(join(work, "csr.pem"), "utf8"), validityDuration: "3600" }),
      });
      expect(res.status).toBe(200);
      const { certChain } = (await res.json()) as { certChain: string[] };
      const [leaf] = await checkChain({ chain: certChain }, 3_600_000);
      expect(leaf?.subject).toBe(`CN=${productpage}`);
    });
  });
}

const ttlEnv = { DEFAULT_WORKLOAD_CERT_TTL: "12h", MAX_WORKLOAD_CERT_TTL: "48h" };

describeCa(
  "with a plug-in CA (ROOT_CA_DIR)",
  async () => {
    const ca = await pluginCa({ keyFormat: "sec1", from: Date.now() - 3_600_000 });
    const caDir = mkdtempSync(join(tmpdir(), "edgepilot-cacerts-"));
    for (const [name, text] of Object.entries(ca.files)) writeFileSync(join(caDir, name), text);
    return startControlPlane({ ...jwtEnv(), ...ttlEnv, ROOT_CA_DIR: caDir });
  },
  // leaf, cert-chain.pem's intermediate and root, root-cert.pem
  4,
);

describeCa(
  "with the self-signed root kept in a file store",
  () =>
    startControlPlane({
      ...jwtEnv(),
      ...ttlEnv,
      EDGEPILOT_STORE: "file",
      EDGEPILOT_DATA_DIR: mkdtempSync(join(tmpdir(), "edgepilot-ca-store-")),
    }),
  2,
);

describe("start-up without what the CA needs", () => {
  it("stops on a ROOT_CA_DIR without the plug-in files, naming it", async () => {
    const empty = mkdtempSync(join(tmpdir(), "edgepilot-cacerts-empty-"));
    await expect(startControlPlane({ ...jwtEnv(), ROOT_CA_DIR: empty })).rejects.toThrow(
      /cannot start: ROOT_CA_DIR=.*: cannot read ca-cert.pem/,
    );
  });

  it("serves no CA without XDS_AUTH=jwt, and says what to set", async () => {
    const cp = await startControlPlane({});
    try {
      expect(cp.output()).toMatch(/ca: IstioCertificateService is not served: .*set XDS_AUTH=jwt/);
      const outcome = await grpcCall(cp.xdsPort, undefined, { csr: await csrPem() });
      expect(outcome).toMatchObject({ code: Code.FailedPrecondition, message: /set XDS_AUTH=jwt/ });
    } finally {
      await cp.stop();
    }
  });
});

describe("the trust domain the CA signs for", () => {
  it("follows the cluster's MeshConfig trustDomain (the istio ConfigMap) when TRUST_DOMAIN is not set", async () => {
    const cp = await startControlPlane({ ...jwtEnv(), ...ttlEnv });
    try {
      const res = await cp.post([
        {
          type: "ADDED",
          object: {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: "istio", namespace: "istio-system", resourceVersion: "1" },
            data: { mesh: "trustDomain: mesh.example\n" },
          },
        },
      ]);
      expect(res.status, await res.clone().text()).toBe(200);
      const identity = "spiffe://mesh.example/ns/default/sa/productpage";
      await checkIssuedChain(
        await connectCall(cp.port, await mint(), {
          csr: await csrPem({ sans: [{ type: "url", value: identity }] }),
        }),
        identity,
      );
    } finally {
      await cp.stop();
    }
  });
});
