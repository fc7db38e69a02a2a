/**
 * The CA's key and certificates (istiod's KeyCertBundle): the signing certificate and key, the
 * chain between it and the root (cert-chain.pem), and the root bundle (root-cert.pem). A plug-in
 * CA is loaded from the four PEM texts of Istio's layout and verified as istiod's
 * NewVerifiedKeyCertBundleFromFile and NewPluggedCertIstioCAOptions do; the texts are read by the
 * host (a directory on Node), so this stays WebCrypto only.
 */
// Before @peculiar/x509: tsyringe needs the Reflect metadata API when it loads.
import "reflect-metadata";
import { BasicConstraintsExtension, X509Certificate } from "@peculiar/x509";
import { importPrivateKeyPem, publicSpkiOf, type SigningKey } from "./private-key.ts";

/** What the CA signs with and what it sends after each leaf. */
export interface CaBundle {
  /** The certificate leaves are issued under (ca-cert.pem; the root itself when self-signed). */
  signingCert: X509Certificate;
  signingKey: SigningKey;
  /** cert-chain.pem as given ("" when self-signed): istiod sends its certificates after the leaf. */
  certChainPem: string;
  /** root-cert.pem as given: the last element of every answer. */
  rootCertPem: string;
  /** The first certificate of root-cert.pem (its expiry is citadel_server_root_cert_expiry_timestamp). */
  rootCert: X509Certificate;
  /** Where it came from, for the start-up line. */
  source: "plug-in" | "self-signed";
}

/** Istio's plug-in CA files (ROOT_CA_DIR), as text. */
export interface PluginCaFiles {
  "ca-cert.pem": string;
  "ca-key.pem": string;
  "cert-chain.pem": string;
  "root-cert.pem": string;
}

/** The names of the plug-in layout's files, in the order errors are reported. */
export const pluginCaFileNames: readonly (keyof PluginCaFiles)[] = [
  "ca-cert.pem",
  "ca-key.pem",
  "cert-chain.pem",
  "root-cert.pem",
];

const certBlock = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

/**
 * Each certificate of a PEM text as its own PEM text (istiod's PemCertBytestoString), in order;
 * the response sends them one per element so clients (ztunnel) need not split them.
 */
export function splitPemCertificates(pem: string): string[] {
  return [...pem.matchAll(certBlock)].map((m) => m[0]);
}

/** The certificates of a PEM text, or why one does not parse. */
export function parseCertificates(
  pem: string,
): { ok: true; certs: X509Certificate[] } | { ok: false; error: string } {
  const certs: X509Certificate[] = [];
  for (const [i, text] of splitPemCertificates(pem).entries()) {
    try {
      certs.push(new X509Certificate(text));
    } catch (e) {
      return {
        ok: false,
        error: `certificate ${i + 1} does not parse: ${e instanceof Error ? e.message : e}`,
      };
    }
  }
  return { ok: true, certs };
}

/**
 * A verified plug-in bundle, or an error naming the file: the signing certificate must be a CA,
 * its key must be the certificate's, and it must chain through cert-chain.pem to a root of
 * root-cert.pem by signatures, valid at `now`.
 */
export async function loadPluginCa(
  files: PluginCaFiles,
  now: number,
): Promise<{ ok: true; bundle: CaBundle } | { ok: false; error: string }> {
  const fail = (error: string) => ({ ok: false as const, error });
  const signing = parseCertificates(files["ca-cert.pem"]);
  if (!signing.ok) return fail(`ca-cert.pem: ${signing.error}`);
  const signingCert = signing.certs[0];
  if (!signingCert) return fail("ca-cert.pem: no CERTIFICATE block");
  const constraints = signingCert.getExtension(BasicConstraintsExtension);
  if (!constraints?.ca) return fail("ca-cert.pem: certificate is not authorized to sign other certificates");
  const key = await importPrivateKeyPem(files["ca-key.pem"]);
  if (!key.ok) return fail(`ca-key.pem: ${key.error}`);
  if (!sameBytes(await publicSpkiOf(key.key), signingCert.publicKey.rawData))
    return fail("ca-key.pem: the key is not the key of ca-cert.pem");
  const chain = parseCertificates(files["cert-chain.pem"]);
  if (!chain.ok) return fail(`cert-chain.pem: ${chain.error}`);
  const roots = parseCertificates(files["root-cert.pem"]);
  if (!roots.ok) return fail(`root-cert.pem: ${roots.error}`);
  const rootCert = roots.certs[0];
  if (!rootCert) return fail("root-cert.pem: no CERTIFICATE block");
  const verified = await chainsToRoot(signingCert, chain.certs, roots.certs, new Date(now));
  if (!verified.ok)
    return fail(
      `ca-cert.pem: cannot verify the cert with root-cert.pem through cert-chain.pem: ${verified.error}`,
    );
  return {
    ok: true,
    bundle: {
      signingCert,
      signingKey: key.key,
      certChainPem: files["cert-chain.pem"],
      rootCertPem: files["root-cert.pem"],
      rootCert,
      source: "plug-in",
    },
  };
}

/** Walks issuer links from `cert` through `intermediates` to one of `roots`, checking signatures and validity. */
async function chainsToRoot(
  cert: X509Certificate,
  intermediates: readonly X509Certificate[],
  roots: readonly X509Certificate[],
  at: Date,
): Promise<{ ok: true } | { ok: false; error: string }> {
  let current = cert;
  for (let depth = 0; depth <= intermediates.length; depth++) {
    if (at < current.notBefore || at > current.notAfter)
      return {
        ok: false,
        error: `${current.subject} is not valid now (${iso(current.notBefore)} to ${iso(current.notAfter)})`,
      };
    for (const root of roots)
      if (current.issuer === root.subject && (await signedBy(current, root))) {
        if (at < root.notBefore || at > root.notAfter)
          return { ok: false, error: `the root ${root.subject} is not valid now` };
        return { ok: true };
      }
    const next = await findIssuer(current, intermediates);
    if (!next)
      return { ok: false, error: `no issuer of ${current.subject} (issuer ${current.issuer}) was found` };
    current = next;
  }
  return { ok: false, error: "cert-chain.pem loops" };
}

async function findIssuer(
  cert: X509Certificate,
  candidates: readonly X509Certificate[],
): Promise<X509Certificate | undefined> {
  for (const c of candidates)
    if (c !== cert && cert.issuer === c.subject && (await signedBy(cert, c))) return c;
  return undefined;
}

async function signedBy(cert: X509Certificate, issuer: X509Certificate): Promise<boolean> {
  try {
    return await cert.verify({ publicKey: issuer.publicKey, signatureOnly: true }, crypto);
  } catch {
    return false;
  }
}

function sameBytes(a: ArrayBuffer, b: ArrayBuffer): boolean {
  if (a.byteLength !== b.byteLength) return false;
  const x = new Uint8Array(a);
  const y = new Uint8Array(b);
  return x.every((v, i) => v === y[i]);
}

function iso(d: Date): string {
  return d.toISOString();
}
