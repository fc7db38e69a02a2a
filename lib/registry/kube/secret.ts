/**
 * Kubernetes Secrets as istiod's credentials controller reads them for gateways
 * (pilot/pkg/credentials/kube/secrets.go): a certificate and key under `tls.crt`/`tls.key` (with
 * `ca.crt`, `ca.crl`, `tls.ocsp-staple`) or `cert`/`key` (with `cacert`, `crl`), the generic keys
 * first; a CA-only Secret (`ca.crt` or `cacert`) serves `kubernetes://<name>-cacert`. Only
 * `kubernetes.io/tls` and Opaque Secrets are read. Every message names a key, never its content,
 * so a refused Secret can be reported and logged without leaking it.
 */
import { isObject, type Problem, quote, typeName } from "../check.ts";

/** The Secret types istiod's gateways take credentials from (an absent type is Opaque). */
export const secretTypes: readonly string[] = ["kubernetes.io/tls", "Opaque"];

/** The data keys of each layout, as secrets.go names them. */
const generic = { cert: "cert", key: "key", ca: "cacert", crl: "crl" } as const;
const tls = {
  cert: "tls.crt",
  key: "tls.key",
  ca: "ca.crt",
  crl: "ca.crl",
  staple: "tls.ocsp-staple",
} as const;

/**
 * What a Secret serves, each value base64 as the API server sent it: a key pair (with its CRL and
 * OCSP staple), a CA (with its CRL), or both. The data keys it came from are kept for messages.
 */
export interface SecretMaterial {
  certKey?: { cert: string; key: string; crl?: string; staple?: string; from: readonly [string, string] };
  ca?: { cert: string; crl?: string; from: string };
}

const base64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The text of a base64 value (PEM is ASCII: bytes map one to one). */
export function base64Text(b64: string): string {
  return atob(b64);
}

/** The bytes of a base64 value. */
export function base64Bytes(b64: string): Uint8Array {
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

const nonEmpty = (data: Record<string, string>, ...ks: string[]) => ks.every((k) => (data[k] ?? "") !== "");
const present = (data: Record<string, string>, ...ks: string[]) => ks.every((k) => Object.hasOwn(data, k));

/** Up to three key names and how many more (secrets.go truncatedKeysMessage). */
function keysMessage(data: Record<string, string>): string {
  const ks = Object.keys(data).sort();
  const shown = ks.slice(0, 3).map((k) => quote(k));
  return ks.length > 3 ? `${shown.join(", ")}, and ${ks.length - 3} more...` : shown.join(", ");
}

/**
 * The material of a Secret's `data` (ExtractCertInfo, then ExtractRoot), or istiod's message for a
 * Secret that has neither a key pair nor a CA.
 */
export function secretMaterial(data: Record<string, string>): SecretMaterial | Problem {
  const out: SecretMaterial = {};
  const opt = (k: string) => (nonEmpty(data, k) ? data[k] : undefined);
  for (const l of [generic, tls]) {
    if (out.certKey || !nonEmpty(data, l.cert, l.key)) continue;
    const crl = opt(l.crl);
    const staple = "staple" in l ? opt(l.staple) : undefined;
    out.certKey = {
      cert: data[l.cert] as string,
      key: data[l.key] as string,
      ...(crl !== undefined && { crl }),
      ...(staple !== undefined && { staple }),
      from: [l.cert, l.key],
    };
  }
  for (const l of [generic, tls]) {
    if (out.ca || !nonEmpty(data, l.ca)) continue;
    const crl = opt(l.crl);
    out.ca = { cert: data[l.ca] as string, ...(crl !== undefined && { crl }), from: l.ca };
  }
  if (out.certKey || out.ca) return out;
  for (const l of [generic, tls])
    if (present(data, l.cert, l.key))
      return { field: "data", message: `found keys "${l.cert}" and "${l.key}", but they were empty` };
  return {
    field: "data",
    message:
      `found secret, but didn't have expected keys (cert and key) or (tls.crt and tls.key) ` +
      `or a CA (cacert or ca.crt); found: ${keysMessage(data)}`,
  };
}

/** Whether a value is a Problem (and not the material). */
export function isProblem(v: SecretMaterial | Problem): v is Problem {
  return "message" in v;
}

/**
 * The API server's and istiod's rules for a gateway Secret's shape: a type istiod reads, string
 * data values of base64, a key pair or a CA. Its certificates are checked by ingest (lib/ca reads them).
 */
export function secretShapeProblem(value: unknown, path: string): Problem | undefined {
  if (!isObject(value)) return { field: path, message: `must be an object, got ${typeName(value)}` };
  const type = value.type ?? "Opaque";
  if (typeof type !== "string" || !secretTypes.includes(type))
    return {
      field: path ? `${path}.type` : "type",
      message: `${quote(type)}: gateway credentials are read from ${secretTypes.join(" or ")} Secrets only`,
    };
  const data = value.data ?? {};
  if (!isObject(data)) return { field: "data", message: `must be an object, got ${typeName(data)}` };
  for (const [k, v] of Object.entries(data))
    if (typeof v !== "string" || !base64.test(v))
      return { field: `data[${quote(k)}]`, message: "must be a base64 string" };
  const material = secretMaterial(data as Record<string, string>);
  return isProblem(material) ? material : undefined;
}

/** The PEM certificates a Secret's material holds, each with the data key it came from. */
export function materialCertificates(m: SecretMaterial): { b64: string; key: string }[] {
  const out: { b64: string; key: string }[] = [];
  if (m.certKey) out.push({ b64: m.certKey.cert, key: m.certKey.from[0] });
  if (m.ca) out.push({ b64: m.ca.cert, key: m.ca.from });
  return out;
}
