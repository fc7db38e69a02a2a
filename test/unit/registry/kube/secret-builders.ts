/** Builders for gateway Secret tests: a self-signed serving certificate and its key, as a Kubernetes Secret. */
// Before @peculiar/x509: tsyringe needs the Reflect metadata API when it loads.
import "reflect-metadata";
import { PemConverter, X509CertificateGenerator } from "@peculiar/x509";

/** The injected clock: 2026-01-01T00:00:00Z. */
export const now = Date.UTC(2026, 0, 1);
export const day = 24 * 3_600_000;

const ec = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };

/** A P-256 certificate for `host` valid `days` from `from`, and its PKCS#8 key, both PEM. */
export async function servingPair(
  host = "bookinfo.example.com",
  from = now - day,
  days = 90,
): Promise<{ cert: string; key: string }> {
  const keys = (await crypto.subtle.generateKey(ec, true, ["sign", "verify"])) as CryptoKeyPair;
  const cert = await X509CertificateGenerator.createSelfSigned({
    name: `CN=${host}`,
    notBefore: new Date(from),
    notAfter: new Date(from + days * day),
    keys,
    signingAlgorithm: ec,
  });
  const key = PemConverter.encode(
    (await crypto.subtle.exportKey("pkcs8", keys.privateKey)) as ArrayBuffer,
    "PRIVATE KEY",
  );
  return { cert: cert.toString("pem"), key };
}

/** Base64 of a text (PEM is ASCII). */
export const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");

/** A v1 Secret object as the API server sends it. */
export function secretObject(
  name: string,
  namespace: string,
  data: Record<string, string>,
  type = "kubernetes.io/tls",
  resourceVersion = "1",
): Record<string, unknown> {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace, resourceVersion, uid: `uid-${namespace}-${name}` },
    type,
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)])),
  };
}
