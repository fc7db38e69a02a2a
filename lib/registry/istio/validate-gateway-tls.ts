/**
 * A Gateway server's ServerTLSSettings as the API server and istiod check them: the CRD's schema
 * (enums, 1-2 credentialNames and tlsCertificates) and its CEL rules (messages verbatim), then
 * istiod's validateTLSOptions (ISTIO_MUTUAL takes no certificates, one certificate source, the
 * certificate, key and CA bundle a mode needs, where a CRL may be given). Its warnings (ciphers,
 * old TLS versions, certificates PASSTHROUGH ignores) are in warnings.ts.
 */
import { boolean, child, isObject, oneOf, typeName } from "../check.ts";
import { eachOf, fields, has, type P, str } from "./validate-fields.ts";

const modes = ["PASSTHROUGH", "SIMPLE", "MUTUAL", "AUTO_PASSTHROUGH", "ISTIO_MUTUAL", "OPTIONAL_MUTUAL"];
const versions = ["TLS_AUTO", "TLSV1_0", "TLSV1_1", "TLSV1_2", "TLSV1_3"];

const text = (v: unknown, path: string): P =>
  typeof v === "string" ? undefined : { field: path, message: `must be a string, got ${typeName(v)}` };
const texts = (v: unknown, path: string): P => eachOf(v, path, text);

/** The CRD's minItems 1 / maxItems 2 on credentialNames and tlsCertificates. */
const oneOrTwo =
  (item: (v: unknown, path: string) => P) =>
  (v: unknown, path: string): P =>
    Array.isArray(v) && (v.length < 1 || v.length > 2)
      ? { field: path, message: "must have 1 or 2 items" }
      : eachOf(v, path, item);

const certificate = (v: unknown, path: string): P =>
  isObject(v)
    ? fields(v, path, { serverCertificate: text, privateKey: text, caCertificates: text })
    : { field: path, message: `must be an object, got ${typeName(v)}` };

const schema = {
  mode: oneOf(modes),
  httpsRedirect: boolean,
  serverCertificate: text,
  privateKey: text,
  caCertificates: text,
  caCertCredentialName: text,
  caCrl: text,
  credentialName: text,
  credentialNames: oneOrTwo(text),
  tlsCertificates: oneOrTwo(certificate),
  subjectAltNames: texts,
  verifyCertificateSpki: texts,
  verifyCertificateHash: texts,
  minProtocolVersion: oneOf(versions),
  maxProtocolVersion: oneOf(versions),
  cipherSuites: texts,
};

/** The CRD's x-kubernetes-validations on `tls`, in its order (its third rule repeats the first). */
const celRules: [readonly [string, string], string][] = [
  [["tlsCertificates", "credentialNames"], "only one of credentialNames or tlsCertificates can be set"],
  [["credentialName", "credentialNames"], "only one of credentialName or credentialNames can be set"],
];

const list = (v: Record<string, unknown>, k: string): unknown[] => (Array.isArray(v[k]) ? v[k] : []);

/** A Gateway server's `tls`: the CRD's schema and rules, then istiod's validateTLSOptions. */
export function gatewayServerTls(v: unknown, path: string): P {
  if (!isObject(v)) return { field: path, message: `must be an object, got ${typeName(v)}` };
  const p = fields(v, path, schema);
  if (p) return p;
  for (const [[a, b], message] of celRules) if (has(v, a) && has(v, b)) return { field: path, message };
  return tlsOptions(v, path);
}

/** validateTLSOptions' errors, first one in istiod's order. */
function tlsOptions(v: Record<string, unknown>, path: string): P {
  const at = (k: string) => child(path, k);
  const mode = str(v, "mode") || "PASSTHROUGH";
  const cert = str(v, "serverCertificate");
  const key = str(v, "privateKey");
  const credentialName = str(v, "credentialName");
  const credentialNames = list(v, "credentialNames");
  const tlsCertificates = list(v, "tlsCertificates");
  if (mode === "ISTIO_MUTUAL") {
    const refused: [string, boolean, string][] = [
      ["serverCertificate", cert !== "", "server certificate"],
      ["privateKey", key !== "", "private key"],
      ["caCertificates", str(v, "caCertificates") !== "", "CA bundle"],
      ["tlsCertificates", tlsCertificates.length > 0, "tlsCertificates"],
      ["credentialName", credentialName !== "", "credentialName"],
      ["credentialNames", credentialNames.length > 0, "credentialNames"],
    ];
    const found = refused.find(([, set]) => set);
    return found
      ? { field: at(found[0]), message: `ISTIO_MUTUAL TLS cannot have associated ${found[2]}` }
      : undefined;
  }
  const sources = [
    cert !== "" && key !== "",
    credentialName !== "",
    credentialNames.length > 0,
    tlsCertificates.length > 0,
  ];
  if (sources.filter(Boolean).length > 1)
    return {
      field: path,
      message:
        "only one of credential_name, credential_names, server_certificate/private_key, tls_certificates should be specified",
    };
  const terminates = mode === "SIMPLE" || mode === "MUTUAL" || mode === "OPTIONAL_MUTUAL";
  // Credentials named for a terminating mode are fetched over SDS: nothing else is required.
  if (terminates && (credentialName !== "" || credentialNames.length > 0)) return undefined;
  if (terminates) {
    const prefix = mode === "SIMPLE" ? "SIMPLE TLS" : "MUTUAL TLS";
    if (mode !== "SIMPLE" && str(v, "caCertificates") === "")
      return { field: at("caCertificates"), message: `${prefix} requires a client CA bundle` };
    const certs =
      tlsCertificates.length > 0
        ? tlsCertificates.map((c, i) => [isObject(c) ? c : {}, `${at("tlsCertificates")}[${i}]`] as const)
        : [[{ serverCertificate: cert, privateKey: key }, path] as const];
    for (const [c, cp] of certs) {
      if (str(c, "serverCertificate") === "")
        return { field: child(cp, "serverCertificate"), message: `${prefix} requires a server certificate` };
      if (str(c, "privateKey") === "")
        return { field: child(cp, "privateKey"), message: `${prefix} requires a private key` };
    }
  }
  if (str(v, "caCrl") !== "") {
    if (credentialName !== "")
      return {
        field: at("caCrl"),
        message: "CRL is not supported with credentialName. CRL has to be specified in the credential",
      };
    if (mode === "SIMPLE") return { field: at("caCrl"), message: "CRL is not supported with SIMPLE TLS" };
  }
  return undefined;
}
