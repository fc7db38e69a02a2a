/**
 * A Sidecar ingress listener's ServerTLSSettings as istiod checks them: the Sidecar's own rules
 * (ValidateSidecar: no SANs, redirect, credentials or certificate lists, not ISTIO_MUTUAL or
 * AUTO_PASSTHROUGH, an HTTPS or TLS port) and validateTLSOptions (certificates that fit the mode),
 * with the CRD's bounds. Its warnings (ciphers, old TLS versions) are in warnings.ts.
 */
import { child, isObject, oneOf, typeName } from "../check.ts";
import { parseProtocol } from "../kube/protocol.ts";
import { has, type P, str } from "./validate-fields.ts";

const modes = ["PASSTHROUGH", "SIMPLE", "MUTUAL", "AUTO_PASSTHROUGH", "ISTIO_MUTUAL", "OPTIONAL_MUTUAL"];
const versions = ["TLS_AUTO", "TLSV1_0", "TLSV1_1", "TLSV1_2", "TLSV1_3"];

const list = (v: Record<string, unknown>, k: string): unknown[] =>
  Array.isArray(v[k]) ? (v[k] as unknown[]) : [];

/** A Sidecar ingress `tls` on a port of `protocol`. */
export function sidecarIngressTls(v: unknown, path: string, protocol: string): P {
  if (!isObject(v)) return { field: path, message: `must be an object, got ${typeName(v)}` };
  const at = (k: string) => child(path, k);
  const badMode = has(v, "mode") ? oneOf(modes)(v.mode, at("mode")) : undefined;
  if (badMode) return badMode;
  for (const k of ["minProtocolVersion", "maxProtocolVersion"]) {
    const version = has(v, k) ? oneOf(versions)(v[k], at(k)) : undefined;
    if (version) return version;
  }
  for (const k of ["credentialNames", "tlsCertificates"])
    if (has(v, k) && (!Array.isArray(v[k]) || list(v, k).length < 1 || list(v, k).length > 2))
      return { field: at(k), message: "must have 1 or 2 items" };
  if (list(v, "subjectAltNames").length > 0)
    return {
      field: at("subjectAltNames"),
      message: "sidecar: subjectAltNames is not supported in ingress tls",
    };
  if (v.httpsRedirect === true)
    return { field: at("httpsRedirect"), message: "sidecar: httpsRedirect is not supported" };
  if (str(v, "credentialName") !== "")
    return { field: at("credentialName"), message: "sidecar: credentialName is not currently supported" };
  if (list(v, "credentialNames").length > 0)
    return { field: at("credentialNames"), message: "sidecar: credentialNames is not currently supported" };
  if (list(v, "tlsCertificates").length > 0)
    return { field: at("tlsCertificates"), message: "sidecar: tls_certificates is not currently supported" };
  const mode = str(v, "mode") || "PASSTHROUGH";
  if (mode === "ISTIO_MUTUAL" || mode === "AUTO_PASSTHROUGH")
    return {
      field: at("mode"),
      message: `configuration is invalid: cannot set mode to ${mode} in sidecar ingress tls`,
    };
  const p = parseProtocol(protocol);
  if (p !== "HTTPS" && p !== "TLS")
    return { field: path, message: "server cannot have TLS settings for non HTTPS/TLS ports" };
  return tlsOptions(v, path, mode);
}

/** validateTLSOptions for what a Sidecar allows: one certificate source, the certificate and key a mode needs. */
function tlsOptions(v: Record<string, unknown>, path: string, mode: string): P {
  const cert = str(v, "serverCertificate");
  const key = str(v, "privateKey");
  if (mode === "SIMPLE" || mode === "MUTUAL" || mode === "OPTIONAL_MUTUAL") {
    const prefix = mode === "SIMPLE" ? "SIMPLE TLS" : "MUTUAL TLS";
    if (mode !== "SIMPLE" && str(v, "caCertificates") === "")
      return { field: child(path, "caCertificates"), message: `${prefix} requires a client CA bundle` };
    if (cert === "")
      return { field: child(path, "serverCertificate"), message: `${prefix} requires a server certificate` };
    if (key === "") return { field: child(path, "privateKey"), message: `${prefix} requires a private key` };
  }
  if (str(v, "caCrl") !== "" && mode === "SIMPLE")
    return { field: child(path, "caCrl"), message: "CRL is not supported with SIMPLE TLS" };
  return undefined;
}
