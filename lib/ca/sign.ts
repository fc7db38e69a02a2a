/**
 * Signing a workload CSR as istiod's IstioCA.sign and genCertTemplateFromCSR do: the CSR's own
 * signature must verify; its subject and requested extensions are ignored and the only SAN is the
 * caller's SPIFFE ID; a CSR whose SANs name anything else is refused as istiod's registration
 * authority does (ValidateCSR); the TTL is the request's (its default when zero or less), refused
 * above the maximum and clamped to the signing certificate's expiry; NotBefore is two minutes
 * back for clock skew. The answer is ordered as istiod's: leaf, cert-chain.pem's certificates, root.
 */
// Before @peculiar/x509: tsyringe needs the Reflect metadata API when it loads.
import "reflect-metadata";
import {
  AuthorityKeyIdentifierExtension,
  BasicConstraintsExtension,
  ExtendedKeyUsage,
  ExtendedKeyUsageExtension,
  type Extension,
  KeyUsageFlags,
  KeyUsagesExtension,
  Pkcs10CertificateRequest,
  SubjectAlternativeNameExtension,
  SubjectKeyIdentifierExtension,
  X509CertificateGenerator,
} from "@peculiar/x509";
import { type CaBundle, splitPemCertificates } from "./bundle.ts";

/** istiod's CA error types (security/pkg/pki/error): the `error` label of citadel_server_csr_sign_err_count. */
export type CaErrorType = "CA_NOT_READY" | "CSR_ERROR" | "TTL_ERROR" | "CERT_GEN_ERROR";

/** Why a CSR was not signed (the message is safe to show the caller). */
export interface CaError {
  type: CaErrorType;
  message: string;
}

/** DEFAULT_WORKLOAD_CERT_TTL and MAX_WORKLOAD_CERT_TTL, in ms. */
export interface TtlPolicy {
  defaultMs: number;
  maxMs: number;
}

/** One request to sign: the CSR, the identity from the caller's token, the TTL asked for. */
export interface SignRequest {
  csrPem: string;
  /** The SPIFFE ID the certificate is for: its only SAN. */
  identity: string;
  /** validity_duration in ms; zero or less asks for the default. */
  requestedMs: number;
}

/** The certificate chain (leaf first, root last), or why there is none. */
export type SignResult = { ok: true; certChain: string[]; notAfter: Date } | { ok: false; error: CaError };

/** istiod's ClockSkewGracePeriod: a leaf is valid from two minutes before it was signed. */
export const clockSkewGraceMs = 2 * 60_000;

/** The longest CSR text accepted: a P-256 or RSA 4096 CSR is 1-2 KiB. */
export const maxCsrChars = 64 * 1024;

const sanOid = "2.5.29.17";

/** Signs `request` under `bundle` at `now`. */
export async function signCsr(
  bundle: CaBundle,
  request: SignRequest,
  ttl: TtlPolicy,
  now: number,
): Promise<SignResult> {
  const fail = (type: CaErrorType, message: string): SignResult => ({ ok: false, error: { type, message } });
  if (request.csrPem.length > maxCsrChars)
    return fail("CSR_ERROR", `the CSR is ${request.csrPem.length} characters; at most ${maxCsrChars}`);
  if (!/-----BEGIN CERTIFICATE REQUEST-----/.test(request.csrPem))
    return fail("CSR_ERROR", "certificate signing request is not properly encoded");
  let csr: Pkcs10CertificateRequest;
  try {
    csr = new Pkcs10CertificateRequest(request.csrPem);
  } catch {
    return fail("CSR_ERROR", "failed to parse X.509 certificate signing request");
  }
  let valid = false;
  try {
    valid = await csr.verify(crypto);
  } catch {
    valid = false;
  }
  if (!valid) return fail("CSR_ERROR", "the CSR's signature does not verify with its public key");
  const asked = requestedNames(csr);
  if (!asked.ok) return fail("CSR_ERROR", `unable to validate SAN Identities in CSR: ${asked.error}`);
  const other = asked.names.filter((n) => !(n.type === "url" && n.value === request.identity));
  if (other.length > 0)
    return fail(
      "CSR_ERROR",
      `unable to validate SAN Identities in CSR: it asks for ${other.map((n) => `${n.type}:${n.value}`).join(", ")}; ` +
        `the caller may only ask for its own identity ${request.identity}`,
    );
  if (request.requestedMs > ttl.maxMs)
    return fail(
      "TTL_ERROR",
      `requested TTL ${goDuration(request.requestedMs)} is greater than the max allowed TTL ${goDuration(ttl.maxMs)}`,
    );
  const lifetime = request.requestedMs > 0 ? request.requestedMs : Math.min(ttl.defaultMs, ttl.maxMs);
  const signingCert = bundle.signingCert;
  if (now >= signingCert.notAfter.getTime())
    return fail("CERT_GEN_ERROR", `signing certificate has expired at ${signingCert.notAfter.toISOString()}`);
  const notAfter = new Date(Math.min(now + lifetime, signingCert.notAfter.getTime()));
  try {
    const extensions: Extension[] = [
      new KeyUsagesExtension(KeyUsageFlags.digitalSignature | KeyUsageFlags.keyEncipherment, true),
      new ExtendedKeyUsageExtension([ExtendedKeyUsage.serverAuth, ExtendedKeyUsage.clientAuth]),
      new BasicConstraintsExtension(false, undefined, true),
      // Critical because the subject may be empty (X.509 and SPIFFE).
      new SubjectAlternativeNameExtension([{ type: "url", value: request.identity }], true),
    ];
    const ski = signingCert.getExtension(SubjectKeyIdentifierExtension);
    if (ski) extensions.push(new AuthorityKeyIdentifierExtension(ski.keyId));
    // Dual use, as istiod: a CSR with a common name gets the identity as its CN (when it fits).
    const cn = csr.subjectName.getField("CN").length > 0 && request.identity.length <= 64;
    const leaf = await X509CertificateGenerator.create(
      {
        ...(cn && { subject: [{ CN: [request.identity] }] }),
        issuer: signingCert.subjectName,
        notBefore: new Date(now - clockSkewGraceMs),
        notAfter,
        publicKey: csr.publicKey,
        signingKey: bundle.signingKey.key,
        signingAlgorithm: bundle.signingKey.algorithm,
        extensions,
      },
      crypto,
    );
    return { ok: true, certChain: answerChain(bundle, leaf.toString("pem")), notAfter };
  } catch (e) {
    return fail("CERT_GEN_ERROR", `cert generation failed: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/**
 * istiod's response: the leaf, then each certificate of cert-chain.pem on its own (each with the
 * trailing newline istiod adds), then root-cert.pem as it is (the last element is the root bundle).
 */
export function answerChain(
  bundle: Pick<CaBundle, "certChainPem" | "rootCertPem">,
  leafPem: string,
): string[] {
  const out = [`${leafPem.trim()}\n`];
  for (const cert of splitPemCertificates(bundle.certChainPem)) out.push(`${cert}\n`);
  if (bundle.rootCertPem !== "") out.push(bundle.rootCertPem);
  return out;
}

/** The SAN entries a CSR asks for (type as @peculiar/x509 names them: dns, url, ip, email, ...). */
function requestedNames(
  csr: Pkcs10CertificateRequest,
): { ok: true; names: { type: string; value: string }[] } | { ok: false; error: string } {
  const names: { type: string; value: string }[] = [];
  try {
    for (const ext of csr.extensions)
      if (ext.type === sanOid)
        for (const n of new SubjectAlternativeNameExtension(ext.rawData).names.items)
          names.push({ type: n.type, value: n.value });
  } catch (e) {
    return {
      ok: false,
      error: `the SAN extension is incorrectly encoded (${e instanceof Error ? e.message : e})`,
    };
  }
  return { ok: true, names };
}

/** A whole number of seconds as Go's time.Duration prints it (`24h0m0s`, `1m30s`, `45s`), for istiod's messages. */
export function goDuration(ms: number): string {
  const total = Math.floor(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}
