/**
 * CreateCertificate (lib/ca/authority.ts) with lib/auth's guard for the CA audience, an injected
 * clock and istiod's metrics (lib/metrics/ca-metrics.ts): who may have a certificate, for which
 * identity, and what each outcome counts.
 */
import "reflect-metadata";
import { SubjectAlternativeNameExtension, X509Certificate } from "@peculiar/x509";
import { beforeAll, describe, expect, it } from "vitest";
import { createKeySet, createXdsGuard, importJwks } from "../../../lib/auth/index.ts";
import {
  type CertificateAuthority,
  type CertificateAuthorityOptions,
  createCertificateAuthority,
} from "../../../lib/ca/authority.ts";
import { loadOrCreateRoot } from "../../../lib/ca/self-signed.ts";
import { createCaMetrics } from "../../../lib/metrics/ca-metrics.ts";
import { createRegistry, type Registry } from "../../../lib/metrics/registry.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { claims, issuer, jwksOf, makeKeys, sign, type TestKeys } from "../auth/tokens.ts";
import { csrPem, day, now, productpage, trustDomain } from "./builders.ts";

let keys: TestKeys;
let ca: CertificateAuthority;
let registry: Registry;
let authenticate: CertificateAuthorityOptions["authenticate"];
const lines: string[] = [];

beforeAll(async () => {
  keys = await makeKeys();
  const jwks = await importJwks(await jwksOf(keys));
  if (!jwks.ok) throw new Error(jwks.error);
  const keySet = createKeySet({ staticKeys: jwks.keys, now: () => now });
  const guard = createXdsGuard(
    { mode: "jwt", issuer, audiences: ["istio-ca"] },
    { keys: keySet, now: () => now },
  );
  authenticate = guard.authenticate;
  const { bundle } = await loadOrCreateRoot(createMemoryStore(), { trustDomain, ttlMs: 3650 * day, now });
  registry = createRegistry();
  ca = createCertificateAuthority({
    bundle,
    authenticate: guard.authenticate,
    trustDomain,
    ttl: { defaultMs: day, maxMs: 2 * day },
    now: () => now,
    log: (line) => lines.push(line),
    observer: createCaMetrics(registry, bundle, () => now),
  });
});

const token = (overrides: Record<string, unknown> = {}) =>
  sign(keys, "ES256", claims({ aud: ["istio-ca"], ...overrides }));

describe("createCertificateAuthority", () => {
  it("issues for the token's service account, whatever the CSR's subject", async () => {
    const answer = await ca.createCertificate(
      { csr: await csrPem({ cn: "admin", sans: [] }), validityDuration: 0n },
      `Bearer ${await token()}`,
    );
    if (!answer.ok) throw new Error(answer.message);
    const leaf = new X509Certificate(answer.certChain[0] as string);
    expect(leaf.getExtension(SubjectAlternativeNameExtension)?.names.toJSON()).toEqual([
      { type: "url", value: productpage },
    ]);
    expect(leaf.notAfter.getTime()).toBe(now + day);
  });

  const sa = (ns: string, name: string) => ({
    sub: `system:serviceaccount:${ns}:${name}`,
    "kubernetes.io": { namespace: ns, serviceaccount: { name } },
  });
  const refusals: [string, () => Promise<string | undefined>, object, RegExp][] = [
    ["no token", async () => undefined, {}, /^request authenticate failure: missing credentials/],
    [
      "the xDS audience",
      () => token({ aud: ["edgepilot"] }),
      {},
      /audience "edgepilot" is not one of istio-ca \(TOKEN_AUDIENCES\)$/,
    ],
    [
      "an expired token",
      () => token({ exp: now / 1000 - 3600 }),
      {},
      /^request authenticate failure: invalid token: token expired at 2025-12-31T23:00:00.000Z/,
    ],
    [
      "a token naming no service account",
      () => token({ sub: "someone", "kubernetes.io": { namespace: "default" } }),
      {},
      /the token names no service account/,
    ],
    ["a name that is no Kubernetes name", () => token(sa("default", "a/b")), {}, /not a Kubernetes name$/],
    [
      "an impersonated identity",
      () => token(),
      { impersonatedIdentity: "spiffe://cluster.local/ns/x/sa/y" },
      /request impersonation authentication failure/,
    ],
  ];
  it.each(refusals)("refuses %s as Unauthenticated, logged", async (_name, make, extra, message) => {
    const t = await make();
    const answer = await ca.createCertificate(
      { csr: await csrPem(), validityDuration: 0n, ...extra },
      t === undefined ? undefined : `Bearer ${t}`,
    );
    expect(answer).toMatchObject({
      ok: false,
      code: "unauthenticated",
      message: expect.stringMatching(message),
    });
    expect(lines.at(-1)).toMatch(/^ca: refused CreateCertificate: /);
  });

  it("refuses a CSR for another identity and a TTL above the maximum as InvalidArgument", async () => {
    const other = await ca.createCertificate(
      {
        csr: await csrPem({ sans: [{ type: "url", value: "spiffe://cluster.local/ns/default/sa/admin" }] }),
        validityDuration: 0n,
      },
      `Bearer ${await token()}`,
    );
    expect(other).toMatchObject({
      ok: false,
      code: "invalid-argument",
      message: /^CSR signing error \(unable to validate SAN/,
    });
    const long = await ca.createCertificate(
      { csr: await csrPem(), validityDuration: 3n * 86400n },
      `Bearer ${await token()}`,
    );
    expect(long).toMatchObject({
      ok: false,
      code: "invalid-argument",
      message: "CSR signing error (requested TTL 72h0m0s is greater than the max allowed TTL 48h0m0s)",
    });
  });

  it("counts every request and outcome with istiod's metric names", async () => {
    const text = await registry.expose();
    const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1]);
    expect(value("citadel_server_csr_count")).toBe(1 + refusals.length + 2);
    expect(value("citadel_server_authentication_failure_count")).toBe(refusals.length);
    expect(value("citadel_server_success_cert_issuance_count")).toBe(1);
    expect(value('citadel_server_csr_sign_err_count\\{error="CSR_ERROR"\\}')).toBe(1);
    expect(value('citadel_server_csr_sign_err_count\\{error="TTL_ERROR"\\}')).toBe(1);
    expect(value("citadel_server_root_cert_expiry_timestamp")).toBe((now + 3650 * day) / 1000);
    expect(value("citadel_server_root_cert_expiry_seconds")).toBe((3650 * day) / 1000);
    expect(text).not.toContain("citadel_server_cert_chain_expiry_timestamp");
  });

  it("reads a trust domain given as a function on each request (the mesh's effective trustDomain)", async () => {
    let domain = "mesh.example";
    const { bundle } = await loadOrCreateRoot(createMemoryStore(), { trustDomain, ttlMs: day, now });
    const following = createCertificateAuthority({
      bundle,
      authenticate,
      trustDomain: async () => domain,
      ttl: { defaultMs: day, maxMs: day },
      now: () => now,
    });
    const sanOf = async () => {
      const answer = await following.createCertificate(
        { csr: await csrPem({ sans: [] }), validityDuration: 0n },
        `Bearer ${await token()}`,
      );
      if (!answer.ok) throw new Error(answer.message);
      return new X509Certificate(answer.certChain[0] as string)
        .getExtension(SubjectAlternativeNameExtension)
        ?.names.toJSON();
    };
    expect(await sanOf()).toEqual([
      { type: "url", value: "spiffe://mesh.example/ns/default/sa/productpage" },
    ]);
    domain = "other.example";
    expect(await sanOf()).toEqual([
      { type: "url", value: "spiffe://other.example/ns/default/sa/productpage" },
    ]);
  });
});
