/**
 * A gateway Secret's certificates and key checked as istiod's gateways need them, with lib/ca's
 * PEM readers: the check every event passes (the shape, certificates that parse) and the one
 * ingest runs with its clock and WebCrypto (valid now, the key the leaf certificate's). Every
 * message names a data key, never its content.
 */
import { parseCertificates, splitPemCertificates } from "../ca/bundle.ts";
import { importPrivateKeyPem, publicSpkiOf } from "../ca/private-key.ts";
import type { Check, Problem } from "../registry/check.ts";
import { quote } from "../registry/check.ts";
import {
  base64Text,
  isProblem,
  materialCertificates,
  type SecretMaterial,
  secretMaterial,
  secretShapeProblem,
} from "../registry/kube/secret.ts";

/** The certificates of one data key, or the problem naming the key. */
function certificatesOf(b64: string, key: string) {
  const text = base64Text(b64);
  const field = `data[${quote(key)}]`;
  if (splitPemCertificates(text).length === 0)
    return { ok: false as const, problem: { field, message: "holds no PEM CERTIFICATE" } };
  const parsed = parseCertificates(text);
  return parsed.ok ? parsed : { ok: false as const, problem: { field, message: parsed.error } };
}

/** A gateway Secret's check: its shape (registry/kube/secret.ts) and PEM certificates that parse. */
export const secretCheck: Check = (value, path) => {
  const shape = secretShapeProblem(value, path);
  if (shape) return shape;
  const data = ((value as { data?: Record<string, string> }).data ?? {}) as Record<string, string>;
  const material = secretMaterial(data);
  if (isProblem(material)) return material;
  for (const { b64, key } of materialCertificates(material)) {
    const parsed = certificatesOf(b64, key);
    if (!parsed.ok) return parsed.problem;
  }
  return undefined;
};

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Every certificate valid at `now`, and the private key the leaf certificate's (istiod serves an
 * expired one with a warning; edgepilot keeps the last good one instead). Undefined when it passes.
 */
export async function verifySecretMaterial(m: SecretMaterial, now: number): Promise<Problem | undefined> {
  const at = new Date(now);
  for (const { b64, key } of materialCertificates(m)) {
    const parsed = certificatesOf(b64, key);
    if (!parsed.ok) return parsed.problem;
    for (const [i, c] of parsed.certs.entries())
      if (at < c.notBefore || at > c.notAfter)
        return {
          field: `data[${quote(key)}]`,
          message: `certificate ${i + 1} is expired or not yet valid (valid ${c.notBefore.toISOString()} to ${c.notAfter.toISOString()})`,
        };
  }
  if (!m.certKey) return undefined;
  const [certKey, keyKey] = m.certKey.from;
  const imported = await importPrivateKeyPem(base64Text(m.certKey.key));
  if (!imported.ok)
    return { field: `data[${quote(keyKey)}]`, message: `is not a usable private key: ${imported.error}` };
  const leaf = certificatesOf(m.certKey.cert, certKey);
  if (!leaf.ok) return leaf.problem;
  const spki = new Uint8Array(await publicSpkiOf(imported.key));
  const certSpki = new Uint8Array(
    (leaf.certs[0] as { publicKey: { rawData: ArrayBuffer } }).publicKey.rawData,
  );
  if (!sameBytes(spki, certSpki))
    return {
      field: `data[${quote(keyKey)}]`,
      message: `does not match the certificate of data[${quote(certKey)}]`,
    };
  return undefined;
}
