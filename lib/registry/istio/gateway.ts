/**
 * An Istio Gateway (networking.istio.io v1, v1beta1 and v1alpha3 share one spec) as istiod reads
 * it for a gateway proxy (pilot/pkg/model/gateway.go, pkg/config/gateway): the workload selector
 * and the servers, each with its port, bind address, hosts as `namespace/host` (sanitized as
 * sanitizeServerHostNamespace does: `./h` ▶ `<ns>/h`, `*\/h` ▶ `h`, `*\/*` ▶ `*`) and its TLS
 * settings. Validation is elsewhere (a spec that reached here is valid); this only normalizes.
 */
import type { ConfigMeta } from "./config-meta.ts";

/** ServerTLSSettings.TLSmode; a `tls` block without a mode is PASSTHROUGH (the enum's zero). */
export type ServerTlsMode =
  | "PASSTHROUGH"
  | "SIMPLE"
  | "MUTUAL"
  | "AUTO_PASSTHROUGH"
  | "ISTIO_MUTUAL"
  | "OPTIONAL_MUTUAL";

/** ServerTLSSettings.TLSProtocol names (TLS_AUTO when unset). */
export type TlsProtocolVersion = "TLS_AUTO" | "TLSV1_0" | "TLSV1_1" | "TLSV1_2" | "TLSV1_3";

/** A server's TLS settings, as written (lists never absent). */
export interface ServerTls {
  mode: ServerTlsMode;
  httpsRedirect: boolean;
  /** credentialNames when given, else credentialName alone (empty: none). */
  credentialNames: string[];
  subjectAltNames: string[];
  minProtocolVersion: TlsProtocolVersion;
  maxProtocolVersion: TlsProtocolVersion;
  cipherSuites: string[];
  verifyCertificateSpki: string[];
  verifyCertificateHash: string[];
  /** File-mounted certificates (serverCertificate, privateKey, caCertificates): accepted, not served. */
  files: { serverCertificate?: string; privateKey?: string; caCertificates?: string };
}

/** One server of a Gateway. */
export interface GatewayServer {
  port: { number: number; protocol: string; name: string; targetPort?: number };
  /** The address the listener binds; absent: the wildcard. */
  bind?: string;
  /** Hosts sanitized (see the module comment): `host` or `<ns>/host`. */
  hosts: string[];
  /** Server.name, when set (an HTTPS chain's stat prefix). */
  name?: string;
  tls?: ServerTls;
}

/** A Gateway as the gateway generators read it. */
export interface GatewayModel extends ConfigMeta {
  /** Workload labels it selects; empty selects every gateway proxy (as istiod: an empty subset). */
  selector: Readonly<Record<string, string>>;
  /**
   * A Gateway API Gateway's: the Service hostnames whose instances in its namespace it applies to,
   * instead of `selector` (istiod's internal.istio.io/gateway-service annotation).
   */
  services?: readonly string[];
  servers: GatewayServer[];
}

type Raw = Record<string, unknown>;
const obj = (v: unknown): Raw => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Raw) : {});
const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

const modes: ReadonlySet<string> = new Set([
  "PASSTHROUGH",
  "SIMPLE",
  "MUTUAL",
  "AUTO_PASSTHROUGH",
  "ISTIO_MUTUAL",
  "OPTIONAL_MUTUAL",
]);
const versions: ReadonlySet<string> = new Set(["TLS_AUTO", "TLSV1_0", "TLSV1_1", "TLSV1_2", "TLSV1_3"]);

/** Normalizes a Gateway spec that passed validation (see the module comment). */
export function toGateway(meta: ConfigMeta, spec: unknown, services?: readonly string[]): GatewayModel {
  const s = obj(spec);
  const selector: Record<string, string> = {};
  for (const [k, v] of Object.entries(obj(s.selector))) if (typeof v === "string") selector[k] = v;
  const servers = (Array.isArray(s.servers) ? s.servers : []).flatMap((raw) => {
    const server = toServer(obj(raw), meta.namespace);
    return server ? [server] : [];
  });
  return {
    name: meta.name,
    namespace: meta.namespace,
    ...(meta.creationTimestamp !== undefined && { creationTimestamp: meta.creationTimestamp }),
    selector,
    ...(services && { services }),
    servers,
  };
}

function toServer(s: Raw, namespace: string): GatewayServer | undefined {
  const p = obj(s.port);
  // istiod skips a server without a port (validation refuses it; an extra guard there too).
  if (typeof p.number !== "number") return undefined;
  const port = {
    number: p.number,
    protocol: typeof p.protocol === "string" ? p.protocol : "",
    name: typeof p.name === "string" ? p.name : "",
    ...(typeof p.targetPort === "number" && p.targetPort > 0 && { targetPort: p.targetPort }),
  };
  const tls = s.tls === undefined || s.tls === null ? undefined : toTls(obj(s.tls));
  const bind = str(s.bind);
  const name = str(s.name);
  return {
    port,
    ...(bind && { bind }),
    hosts: sanitizeHosts(strings(s.hosts), namespace),
    ...(name && { name }),
    ...(tls && { tls }),
  };
}

function toTls(t: Raw): ServerTls {
  const mode = typeof t.mode === "string" && modes.has(t.mode) ? (t.mode as ServerTlsMode) : "PASSTHROUGH";
  const names = strings(t.credentialNames).filter((n) => n !== "");
  const single = str(t.credentialName);
  const version = (v: unknown): TlsProtocolVersion =>
    typeof v === "string" && versions.has(v) ? (v as TlsProtocolVersion) : "TLS_AUTO";
  const files = {
    ...(str(t.serverCertificate) && { serverCertificate: str(t.serverCertificate) }),
    ...(str(t.privateKey) && { privateKey: str(t.privateKey) }),
    ...(str(t.caCertificates) && { caCertificates: str(t.caCertificates) }),
  };
  return {
    mode,
    httpsRedirect: t.httpsRedirect === true,
    credentialNames: names.length > 0 ? names : single ? [single] : [],
    subjectAltNames: strings(t.subjectAltNames),
    minProtocolVersion: version(t.minProtocolVersion),
    maxProtocolVersion: version(t.maxProtocolVersion),
    cipherSuites: strings(t.cipherSuites),
    verifyCertificateSpki: strings(t.verifyCertificateSpki),
    verifyCertificateHash: strings(t.verifyCertificateHash),
    files,
  };
}

/** sanitizeServerHostNamespace: `./h` ▶ `<ns>/h`, `*\/h` ▶ `h`, `*\/*` ▶ the lone `*`. */
export function sanitizeHosts(hosts: readonly string[], namespace: string): string[] {
  const out: string[] = [];
  for (const h of hosts) {
    const slash = h.indexOf("/");
    if (slash < 0) {
      out.push(h);
      continue;
    }
    const ns = h.slice(0, slash);
    const host = h.slice(slash + 1);
    if (ns === ".") out.push(`${namespace}/${host}`);
    else if (ns === "*") {
      if (host === "*") return ["*"];
      out.push(host);
    } else out.push(h);
  }
  return out;
}

/** A sanitized host split: its namespace (undefined: any) and the hostname. */
export function splitHost(h: string): { namespace?: string; host: string } {
  const slash = h.indexOf("/");
  return slash < 0 ? { host: h } : { namespace: h.slice(0, slash), host: h.slice(slash + 1) };
}

/**
 * Whether a Gateway applies to a gateway proxy, as istiod's mergeGateways chooses: a Gateway API
 * one when one of the proxy's service instances is of its Services, in its namespace; an Istio one
 * when its selector is a subset of the proxy's `labels`.
 */
export function selectsWorkload(
  g: GatewayModel,
  labels: Readonly<Record<string, string>>,
  instances: readonly { hostname: string; namespace: string }[] = [],
): boolean {
  if (g.services) {
    const known = new Set(g.services);
    return instances.some((i) => i.namespace === g.namespace && known.has(i.hostname));
  }
  for (const [k, v] of Object.entries(g.selector)) if (labels[k] !== v) return false;
  return true;
}

/** protocol.Parse(...).IsHTTP(): HTTP, HTTP2, GRPC, GRPC-Web (case-insensitive). */
export function isHttpProtocol(protocol: string): boolean {
  const p = protocol.toUpperCase();
  return p === "HTTP" || p === "HTTP2" || p === "GRPC" || p === "GRPC-WEB" || p === "HTTP_PROXY";
}

/** gateway.IsPassThroughServer: a TLS server whose mode is PASSTHROUGH or AUTO_PASSTHROUGH. */
export function isPassthroughServer(s: GatewayServer): boolean {
  return s.tls !== undefined && (s.tls.mode === "PASSTHROUGH" || s.tls.mode === "AUTO_PASSTHROUGH");
}

/** gateway.IsTLSServer: TLS settings on a server that is not plaintext HTTP. */
export function isTlsServer(s: GatewayServer): boolean {
  return s.tls !== undefined && !isHttpProtocol(s.port.protocol);
}

/** gateway.IsHTTPServer: plaintext HTTP, or HTTPS that terminates TLS (both take an RDS route). */
export function isHttpServer(s: GatewayServer): boolean {
  return (
    isHttpProtocol(s.port.protocol) || (s.port.protocol.toUpperCase() === "HTTPS" && !isPassthroughServer(s))
  );
}

/** gateway.IsHTTPSServerWithTLSTermination: an HTTPS server that terminates TLS. */
export function isHttpsTerminating(s: GatewayServer): boolean {
  return s.tls !== undefined && s.port.protocol.toUpperCase() === "HTTPS" && !isPassthroughServer(s);
}
