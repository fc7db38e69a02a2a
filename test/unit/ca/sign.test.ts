/**
 * lib/ca/sign.ts under a plug-in CA made here: the leaf's only SAN is the identity, its validity
 * is the one asked for (the default when none, refused above the maximum, clamped to the signing
 * cert), the chain is leaf, cert-chain.pem's certificates, root; bad CSRs are refused as istiod does.
 */
// Before @peculiar/x509: tsyringe needs the Reflect metadata API when it loads.
import "reflect-metadata";
import {
  ExtendedKeyUsageExtension,
  KeyUsagesExtension,
  SubjectAlternativeNameExtension,
  X509Certificate,
} from "@peculiar/x509";
import { beforeAll, describe, expect, it } from "vitest";
import { type CaBundle, loadPluginCa } from "../../../lib/ca/bundle.ts";
import { clockSkewGraceMs, goDuration, signCsr, type TtlPolicy } from "../../../lib/ca/sign.ts";
import { csrPem, day, keyPair, now, pluginCa, productpage } from "./builders.ts";

const ttl: TtlPolicy = { defaultMs: day, maxMs: 7 * day };
let bundle: CaBundle;
let ca: Awaited<ReturnType<typeof pluginCa>>;

beforeAll(async () => {
  ca = await pluginCa();
  const loaded = await loadPluginCa(ca.files, now);
  if (!loaded.ok) throw new Error(loaded.error);
  bundle = loaded.bundle;
});

const sign = async (csr: string, requestedMs = 0, policy = ttl, at = now, identity = productpage) =>
  signCsr(bundle, { csrPem: csr, identity, requestedMs }, policy, at);

describe("signCsr", () => {
  it("issues a leaf whose only SAN is the identity, chained as istiod orders it", async () => {
    const result = await sign(await csrPem());
    if (!result.ok) throw new Error(result.error.message);
    expect(result.certChain).toHaveLength(4);
    expect(result.certChain[1]).toBe(ca.intermediatePem);
    expect(result.certChain[2]).toBe(ca.rootPem);
    expect(result.certChain[3]).toBe(ca.files["root-cert.pem"]);
    for (const pem of result.certChain) expect(pem.endsWith("-----\n")).toBe(true);
    const leaf = new X509Certificate(result.certChain[0] as string);
    const san = leaf.getExtension(SubjectAlternativeNameExtension);
    expect(san?.critical).toBe(true);
    expect(san?.names.toJSON()).toEqual([{ type: "url", value: productpage }]);
    expect(leaf.subject).toBe("");
    expect(leaf.issuer).toBe(new X509Certificate(ca.intermediatePem).subject);
    expect(
      await leaf.verify(
        { publicKey: new X509Certificate(ca.intermediatePem).publicKey, signatureOnly: true },
        crypto,
      ),
    ).toBe(true);
    expect(leaf.getExtension(KeyUsagesExtension)?.usages).toBe(5); // digitalSignature | keyEncipherment
    expect(leaf.getExtension(ExtendedKeyUsageExtension)?.usages).toEqual([
      "1.3.6.1.5.5.7.3.1",
      "1.3.6.1.5.5.7.3.2",
    ]);
  });

  it("keeps the CSR's public key and puts the identity in the CN of a dual-use CSR", async () => {
    const keys = await keyPair();
    const result = await sign(await csrPem({ keys, cn: "anything", sans: [] }));
    if (!result.ok) throw new Error(result.error.message);
    const leaf = new X509Certificate(result.certChain[0] as string);
    expect(leaf.subject).toBe(`CN=${productpage}`);
    const spki = new Uint8Array((await crypto.subtle.exportKey("spki", keys.publicKey)) as ArrayBuffer);
    expect(new Uint8Array(leaf.publicKey.rawData)).toEqual(spki);
  });

  const validity: [string, number, TtlPolicy, number][] = [
    ["no TTL asked: the default", 0, ttl, day],
    ["a negative TTL: the default", -5000, ttl, day],
    ["one hour asked", 3_600_000, ttl, 3_600_000],
    ["exactly the maximum", 7 * day, ttl, 7 * day],
    ["a default above the maximum is capped by it", 0, { defaultMs: 30 * day, maxMs: 2 * day }, 2 * day],
  ];
  it.each(validity)("%s", async (_name, requestedMs, policy, lifetime) => {
    const result = await sign(await csrPem(), requestedMs, policy);
    if (!result.ok) throw new Error(result.error.message);
    const leaf = new X509Certificate(result.certChain[0] as string);
    expect(leaf.notBefore.getTime()).toBe(now - clockSkewGraceMs);
    expect(leaf.notAfter.getTime()).toBe(now + lifetime);
  });

  it("clamps the leaf to the signing certificate's expiry", async () => {
    const short = await pluginCa({ intermediateDays: 2 });
    const loaded = await loadPluginCa(short.files, now);
    if (!loaded.ok) throw new Error(loaded.error);
    const result = await signCsr(
      loaded.bundle,
      { csrPem: await csrPem(), identity: productpage, requestedMs: 5 * day },
      ttl,
      now,
    );
    if (!result.ok) throw new Error(result.error.message);
    expect(new X509Certificate(result.certChain[0] as string).notAfter).toEqual(
      loaded.bundle.signingCert.notAfter,
    );
  });

  const other = "spiffe://cluster.local/ns/kube-system/sa/default";
  const refusals: [string, () => Promise<string>, number, RegExp][] = [
    ["garbage", async () => "not a csr", 0, /^certificate signing request is not properly encoded$/],
    [
      "a PEM block that is no CSR",
      async () => "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n",
      0,
      /^failed to parse X.509 certificate signing request$/,
    ],
    [
      "another namespace's identity",
      () => csrPem({ sans: [{ type: "url", value: other }] }),
      0,
      /^unable to validate SAN Identities in CSR: it asks for url:spiffe:\/\/cluster.local\/ns\/kube-system\/sa\/default; the caller may only ask for its own identity spiffe:\/\/cluster.local\/ns\/default\/sa\/productpage$/,
    ],
    [
      "its own identity and another",
      () =>
        csrPem({
          sans: [
            { type: "url", value: productpage },
            { type: "url", value: other },
          ],
        }),
      0,
      /asks for url:spiffe:\/\/cluster.local\/ns\/kube-system/,
    ],
    [
      "a DNS name",
      () => csrPem({ sans: [{ type: "dns", value: "evil.example" }] }),
      0,
      /asks for dns:evil.example;/,
    ],
    [
      "a TTL above the maximum",
      () => csrPem(),
      8 * day,
      /^requested TTL 192h0m0s is greater than the max allowed TTL 168h0m0s$/,
    ],
  ];
  it.each(refusals)("refuses %s", async (_name, csr, requestedMs, message) => {
    const result = await sign(await csr(), requestedMs);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.type).toBe(requestedMs > 0 ? "TTL_ERROR" : "CSR_ERROR");
    expect(result.error.message).toMatch(message);
  });

  it("refuses a CSR whose signature does not verify", async () => {
    const good = await csrPem();
    const der = Buffer.from(good.replace(/-----[^-]+-----|\s/g, ""), "base64");
    der[der.length - 5] = (der[der.length - 5] as number) ^ 0xff; // inside the signature
    const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString("base64")}\n-----END CERTIFICATE REQUEST-----\n`;
    const result = await sign(tampered);
    expect(result).toMatchObject({ ok: false, error: { type: "CSR_ERROR" } });
  });

  it("refuses to sign once the signing certificate expired", async () => {
    const result = await sign(await csrPem(), 0, ttl, bundle.signingCert.notAfter.getTime() + 1);
    expect(result).toMatchObject({
      ok: false,
      error: { type: "CERT_GEN_ERROR", message: /signing certificate has expired/ },
    });
  });
});

describe("goDuration", () => {
  it.each([
    [3_600_000, "1h0m0s"],
    [90_000, "1m30s"],
    [45_000, "45s"],
    [90 * day, "2160h0m0s"],
  ])("%d ms is %s", (ms, text) => expect(goDuration(ms)).toBe(text));
});
