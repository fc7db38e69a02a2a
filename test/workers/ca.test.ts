/**
 * IstioCertificateService on the Worker (workerd): CreateCertificate over Connect (JSON) and
 * gRPC-Web with service-account JWTs for istio-ca, signed by the self-signed root the MeshStore
 * keeps (one root for every call) and by a plug-in CA from the four secrets. The chain's leaf has
 * the token's SPIFFE ID as its only SAN and verifies to the answer's root; refusals carry the
 * codes and messages test/e2e/ca/ca.test.ts expects from the Node runtime.
 */
import "reflect-metadata";
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import {
  Pkcs10CertificateRequestGenerator,
  SubjectAlternativeNameExtension,
  X509Certificate,
} from "@peculiar/x509";
import { beforeAll, describe, expect, it } from "vitest";
import entry, { type Env } from "../../functions/workers/index.ts";
import { generateRoot, type StoredCaRoot } from "../../lib/ca/self-signed.ts";
import {
  IstioCertificateRequestSchema,
  IstioCertificateResponseSchema,
} from "../../lib/gen/istio/v1/auth/ca_pb.ts";
import { createDurableObjectStore } from "../../lib/store/durable-object.ts";
import { keys as storeKeys } from "../../lib/store/keys.ts";
import { type CaOutcome, checkIssuedChain } from "../e2e/ca/chain.ts";
import { caRefusals } from "../e2e/ca/refusals.ts";
import { claims, issuer, jwksOf, makeKeys, sign, type TestKeys } from "../unit/auth/tokens.ts";
import { mesh, origin, testXdsToken } from "./support.ts";

const path = "/istio.v1.auth.IstioCertificateService/CreateCertificate";
const productpage = "spiffe://cluster.local/ns/default/sa/productpage";
/** Far from any test clock (workerd tests may freeze Date a day ahead). */
const valid = { nbf: 1_577_836_800, exp: 4_102_444_800 };
const ec = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };

let keys: TestKeys;
let jwtVars: Partial<Env>;

beforeAll(async () => {
  keys = await makeKeys();
  jwtVars = {
    XDS_AUTH: "jwt",
    XDS_JWT_ISSUER: issuer,
    XDS_JWT_AUDIENCE: "edgepilot",
    XDS_JWKS: await jwksOf(keys),
  };
});

/** A token for default/productpage, for `aud`. */
const mint = (aud: string[] = ["istio-ca"], overrides: Record<string, unknown> = {}) =>
  sign(keys, "ES256", claims({ ...valid, aud, ...overrides }));

/** A CSR as istio-agent makes it, asking for `san`. */
async function csrPem(san = productpage): Promise<string> {
  const pair = (await crypto.subtle.generateKey(ec, true, ["sign", "verify"])) as CryptoKeyPair;
  const csr = await Pkcs10CertificateRequestGenerator.create(
    {
      name: "O=",
      keys: pair,
      signingAlgorithm: ec,
      extensions: [new SubjectAlternativeNameExtension([{ type: "url", value: san }])],
    },
    crypto,
  );
  return csr.toString("pem");
}

/** Connect's JSON name of a code (Code.InvalidArgument: "invalid_argument"). */
const connectCodeName = (code: Code) =>
  Code[code].replace(/[A-Z]/g, (c, i) => (i > 0 ? "_" : "") + c.toLowerCase());

/** The Worker over the test env plus `vars` (a new env object builds a new app). */
function workerWith(vars: Partial<Env>) {
  const e: Env = { ...env, ...jwtVars, ...vars };
  return (init: RequestInit) =>
    entry.fetch(new Request(`${origin}${path}`, init), e, createExecutionContext());
}

/** CreateCertificate over Connect with the JSON codec. */
async function connectCall(
  call: ReturnType<typeof workerWith>,
  token: string | undefined,
  body: { csr: string; validityDuration?: string },
): Promise<CaOutcome> {
  const res = await call({
    method: "POST",
    headers: {
      "content-type": "application/json",
      "connect-protocol-version": "1",
      ...(token !== undefined && { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { certChain?: string[]; code?: string; message?: string };
  if (res.status === 200) return { chain: json.certChain ?? [] };
  return { code: json.code ?? "", message: json.message ?? "" };
}

/** Checks an issued chain (checkIssuedChain) and that the leaf lives at most the hour asked (plus skew). */
async function checkChain(outcome: CaOutcome): Promise<X509Certificate[]> {
  const certs = await checkIssuedChain(outcome, productpage);
  const leaf = certs[0] as X509Certificate;
  expect(leaf.notAfter.getTime() - leaf.notBefore.getTime()).toBeLessThanOrEqual(3_600_000 + 300_000);
  return certs;
}

describe("CreateCertificate on the Worker, self-signed root in the MeshStore", () => {
  it("signs a CSR over Connect: SAN from the token only, chained to the stored root", async () => {
    const call = workerWith({});
    const certs = await checkChain(
      await connectCall(call, await mint(), { csr: await csrPem(), validityDuration: "3600" }),
    );
    expect(certs).toHaveLength(2);
    const stored = await createDurableObjectStore(mesh()).get<StoredCaRoot>(storeKeys.caRoot());
    expect(certs[1]?.toString("pem")).toBe(new X509Certificate(stored?.value.certPem ?? "").toString("pem"));
    // Another isolate's app (a new env object) signs under the same root.
    const again = await checkChain(
      await connectCall(workerWith({ LOG_LEVEL: "warn" }), await mint(), {
        csr: await csrPem(),
        validityDuration: "3600",
      }),
    );
    expect(again[1]?.toString("pem")).toBe(certs[1]?.toString("pem"));
  });

  it("signs a CSR over gRPC-Web", async () => {
    const message = toBinary(
      IstioCertificateRequestSchema,
      create(IstioCertificateRequestSchema, { csr: await csrPem(), validityDuration: 3600n }),
    );
    const frame = new Uint8Array(5 + message.length);
    new DataView(frame.buffer).setUint32(1, message.length);
    frame.set(message, 5);
    const res = await workerWith({})({
      method: "POST",
      headers: { "content-type": "application/grpc-web+proto", authorization: `Bearer ${await mint()}` },
      body: frame,
    });
    expect(res.status).toBe(200);
    const bytes = new Uint8Array(await res.arrayBuffer());
    expect(bytes[0]).toBe(0);
    const length = new DataView(bytes.buffer).getUint32(1);
    const answer = fromBinary(IstioCertificateResponseSchema, bytes.subarray(5, 5 + length));
    await checkChain({ chain: answer.certChain });
    expect(new TextDecoder().decode(bytes.subarray(10 + length))).toMatch(/grpc-status: ?0/);
  });

  // The requests test/e2e/ca/ca.test.ts sends to the Node runtime, and the answers it expects there.
  const refusals = caRefusals({ mint, csr: (san) => csrPem(san) });
  it.each(
    refusals,
  )("refuses %s, as Node does", async (_name, token, csr, validityDuration, code, message) => {
    const outcome = await connectCall(workerWith({ MAX_WORKLOAD_CERT_TTL: "48h" }), await token(), {
      csr: await csr(),
      validityDuration: String(validityDuration),
    });
    expect(outcome).toEqual({ code: connectCodeName(code), message: expect.stringMatching(message) });
  });

  it("answers FailedPrecondition naming what to configure without XDS_AUTH=jwt", async () => {
    const outcome = await connectCall(
      workerWith({ XDS_AUTH: "token", EDGEPILOT_XDS_TOKEN: testXdsToken }),
      await mint(),
      {
        csr: await csrPem(),
      },
    );
    expect(outcome).toEqual({
      code: "failed_precondition",
      message: expect.stringMatching(/^the certificate authority is not configured: .*XDS_AUTH=jwt/),
    });
  });
});

describe("CreateCertificate on the Worker, plug-in CA from secrets", () => {
  it("signs under CA_CERT_PEM and answers with CERT_CHAIN_PEM and ROOT_CERT_PEM", async () => {
    const root = await generateRoot({
      trustDomain: "plugin.example",
      ttlMs: 86_400_000 * 3650,
      now: Date.now() - 86_400_000,
    });
    const call = workerWith({
      CA_CERT_PEM: root.certPem,
      CA_KEY_PEM: root.keyPem,
      CERT_CHAIN_PEM: root.certPem,
      ROOT_CERT_PEM: root.certPem,
    });
    const certs = await checkChain(
      await connectCall(call, await mint(), { csr: await csrPem(), validityDuration: "3600" }),
    );
    expect(certs.at(-1)?.subject).toBe("O=plugin.example");
  });

  it("names the missing secret when the plug-in CA is set in part", async () => {
    const outcome = await connectCall(workerWith({ CA_CERT_PEM: "x" }), await mint(), {
      csr: await csrPem(),
    });
    expect(outcome).toEqual({
      code: "failed_precondition",
      message: expect.stringMatching(/CA_KEY_PEM, CERT_CHAIN_PEM, ROOT_CERT_PEM not set/),
    });
  });
});
