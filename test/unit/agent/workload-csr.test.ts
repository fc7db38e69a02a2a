/**
 * lib/agent/workload-csr.ts against the CA's own signer (lib/ca/sign.ts): the agent's CSR asks
 * only for its SPIFFE ID and verifies; the answer it reads back is the chain Istio writes to
 * cert-chain.pem, its root and the leaf's expiry; the key is the certificate's.
 */
// Before @peculiar/x509: tsyringe needs the Reflect metadata API when it loads.
import "reflect-metadata";
import { createPrivateKey, createPublicKey, X509Certificate as NodeX509 } from "node:crypto";
import { Pkcs10CertificateRequest, SubjectAlternativeNameExtension } from "@peculiar/x509";
import { describe, expect, it } from "vitest";
import { createWorkloadCsr, readIssuedChain } from "../../../lib/agent/workload-csr.ts";
import { loadPluginCa } from "../../../lib/ca/bundle.ts";
import { signCsr } from "../../../lib/ca/sign.ts";
import { day, now, pluginCa } from "../ca/builders.ts";

const identity = "spiffe://cluster.local/ns/shop/sa/cart";

describe("createWorkloadCsr", () => {
  it("makes a P-256 CSR whose only SAN is the identity, signed by its own key", async () => {
    const { csrPem, privateKeyPem } = await createWorkloadCsr(identity);
    const csr = new Pkcs10CertificateRequest(csrPem);
    expect(await csr.verify(crypto)).toBe(true);
    expect(csr.publicKey.algorithm).toMatchObject({ name: "ECDSA", namedCurve: "P-256" });
    const sans = csr.extensions.filter((e) => e.type === "2.5.29.17");
    expect(sans).toHaveLength(1);
    const san = new SubjectAlternativeNameExtension(sans[0]?.rawData as ArrayBuffer);
    expect(san.names.items.map((n) => [n.type, n.value])).toEqual([["url", identity]]);
    expect(san.critical).toBe(true);
    expect(privateKeyPem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    // The key is the CSR's: its public half is the CSR's public key.
    const spki = createPublicKey(createPrivateKey(privateKeyPem)).export({ format: "der", type: "spki" });
    expect(Buffer.from(spki).equals(Buffer.from(csr.publicKey.rawData))).toBe(true);
  });

  it("makes a new key each time", async () => {
    const [a, b] = await Promise.all([createWorkloadCsr(identity), createWorkloadCsr(identity)]);
    expect(a.privateKeyPem).not.toBe(b.privateKeyPem);
  });
});

describe("readIssuedChain", () => {
  it("reads the CA's answer: the chain leaf first, the last certificate as root, the leaf's NotAfter", async () => {
    const ca = await pluginCa();
    const loaded = await loadPluginCa(ca.files, now);
    if (!loaded.ok) throw new Error(loaded.error);
    const { csrPem, privateKeyPem } = await createWorkloadCsr(identity);
    const signed = await signCsr(
      loaded.bundle,
      { csrPem, identity, requestedMs: day },
      { defaultMs: day, maxMs: 2 * day },
      now,
    );
    if (!signed.ok) throw new Error(signed.error.message);
    const read = readIssuedChain(signed.certChain);
    if (!read.ok) throw new Error(read.error);
    expect(read.expiresAt).toBe(now + day);
    expect(read.certChainPem).toBe(signed.certChain.join(""));
    expect(read.rootCertPem.trim()).toBe(ca.files["root-cert.pem"].trim());
    const leaf = new NodeX509(read.certChainPem);
    expect(leaf.subjectAltName).toBe(`URI:${identity}`);
    expect(leaf.checkPrivateKey(createPrivateKey(privateKeyPem))).toBe(true);
    expect(leaf.verify(new NodeX509(ca.intermediatePem).publicKey)).toBe(true);
  });

  it("refuses an answer without a root, or whose leaf does not parse", () => {
    expect(readIssuedChain([])).toMatchObject({ ok: false, error: expect.stringContaining("0 certificate") });
    const junk = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
    expect(readIssuedChain([junk, junk])).toMatchObject({
      ok: false,
      error: expect.stringContaining("does not parse"),
    });
  });
});
