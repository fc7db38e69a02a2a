/**
 * What every host's CreateCertificate answer must be, checked alike on Node (test/e2e/ca) and on
 * workerd (test/workers/ca.test.ts): the leaf first with the caller's SPIFFE ID as its only SAN,
 * each certificate signed by the next one up, a self-signed root at the end.
 */
import { SubjectAlternativeNameExtension, X509Certificate } from "@peculiar/x509";
import { expect } from "vitest";

/** A CreateCertificate call's outcome: the chain, or the refusal's code and message. */
export type CaOutcome = { chain: string[] } | { code: number | string; message: string };

/** The issued chain (leaf first), checked as the module comment says; throws on a refusal. */
export async function checkIssuedChain(outcome: CaOutcome, identity: string): Promise<X509Certificate[]> {
  if (!("chain" in outcome)) throw new Error(`refused: ${outcome.code} ${outcome.message}`);
  const certs = outcome.chain.map((pem) => new X509Certificate(pem));
  const [leaf] = certs;
  const root = certs.at(-1);
  if (!leaf || !root) throw new Error("empty chain");
  expect(leaf.getExtension(SubjectAlternativeNameExtension)?.names.toJSON()).toEqual([
    { type: "url", value: identity },
  ]);
  for (let i = 0; i + 1 < certs.length; i++) {
    const issuer = certs.slice(i + 1).find((c) => c.subject === certs[i]?.issuer);
    expect(issuer, `issuer of ${certs[i]?.subject}`).toBeDefined();
    expect(await certs[i]?.verify({ publicKey: issuer?.publicKey, signatureOnly: true }, crypto)).toBe(true);
  }
  expect(await root.isSelfSigned(crypto)).toBe(true);
  return certs;
}
