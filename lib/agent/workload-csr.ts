/**
 * The workload's key and CSR, as Istio's pilot-agent makes them (security/pkg/pki/util GenCSR): a
 * fresh ECDSA P-256 key per certificate, made with WebCrypto in the agent and never sent anywhere
 * (its PEM goes only to the local proxy, over SDS or the proxyless files), and a CSR signed by it
 * whose only SAN is the workload's SPIFFE ID, the one identity the CA signs for the caller's token.
 */
// Before @peculiar/x509: tsyringe needs the Reflect metadata API when it loads.
import "reflect-metadata";
import {
  Pkcs10CertificateRequestGenerator,
  SubjectAlternativeNameExtension,
  X509Certificate,
} from "@peculiar/x509";
import { splitPemCertificates } from "../ca/bundle.ts";
import { exportPrivateKeyPem, generateSigningKey } from "../ca/private-key.ts";

/** A CSR (PEM) and the PKCS#8 PEM of the key that signed it. */
export interface WorkloadCsr {
  csrPem: string;
  privateKeyPem: string;
}

/** Makes a new P-256 key and a CSR for `identity` (a SPIFFE ID) signed with it. */
export async function createWorkloadCsr(identity: string): Promise<WorkloadCsr> {
  const { pair, signing } = await generateSigningKey();
  const csr = await Pkcs10CertificateRequestGenerator.create(
    {
      keys: pair,
      signingAlgorithm: signing.algorithm,
      // Critical: the subject is empty, so the SAN is the whole name (X.509 and SPIFFE).
      extensions: [new SubjectAlternativeNameExtension([{ type: "url", value: identity }], true)],
    },
    crypto,
  );
  return { csrPem: csr.toString("pem"), privateKeyPem: await exportPrivateKeyPem(pair.privateKey) };
}

/** A CA answer read as a certificate: the whole chain, its root (the last certificate), the leaf's NotAfter. */
export type IssuedChain =
  | { ok: true; certChainPem: string; rootCertPem: string; expiresAt: number }
  | { ok: false; error: string };

/**
 * Reads CreateCertificate's cert_chain as Istio's secret cache does: the elements concatenated
 * (leaf first) are cert-chain.pem, the last certificate is the root, the leaf's NotAfter is the expiry.
 */
export function readIssuedChain(certChain: readonly string[]): IssuedChain {
  const certs = certChain.flatMap((pem) => splitPemCertificates(pem));
  if (certs.length < 2)
    return { ok: false, error: `the CA answered ${certs.length} certificate(s); want the leaf and its root` };
  let expiresAt: number;
  try {
    expiresAt = new X509Certificate(certs[0] as string).notAfter.getTime();
  } catch (e) {
    return {
      ok: false,
      error: `the CA's leaf does not parse: ${e instanceof Error ? e.message : String(e)}`,
    };
  }
  return {
    ok: true,
    certChainPem: certs.map((c) => `${c}\n`).join(""),
    rootCertPem: `${certs[certs.length - 1]}\n`,
    expiresAt,
  };
}
