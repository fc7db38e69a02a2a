/**
 * Istio Gateway as istiod's validation webhook checks it (ValidateGateway), with the CRD's schema,
 * first problem only, with the field path from the object: the name (a DNS label), the selector,
 * at least one server, each server's hosts (`ns/host`, `./host`, `*` as the namespace, or a bare host), port,
 * bind and TLS (validate-gateway-tls.ts), TLS settings that fit the port's protocol, and unique
 * port names. Warnings: warnings.ts.
 */
import { type Check, child, isObject, quote, stringMap, typeName } from "../check.ts";
import { parseProtocol } from "../kube/protocol.ts";
import { istioMetadata } from "./common.ts";
import { goIpFamily, isDns1123Label, partialWildcardProblem, wildcardDomainProblem } from "./istio-names.ts";
import { eachOf, has, type P, portNumber, str, uint32 } from "./validate-fields.ts";
import { gatewayServerTls } from "./validate-gateway-tls.ts";
import { unixAddress } from "./validate-workload-entry.ts";

/** istiod's annotation on a Gateway it converted from the Gateway API: its hosts may use `~/`, its name dots. */
const semanticsAnnotation = "internal.istio.io/gateway-semantics";

const unixPrefix = "unix://";

/** Checks an Istio Gateway object's metadata, name and `spec`. */
export const gatewayCheck: Check = (obj, path) => {
  if (!isObject(obj)) return undefined;
  const specPath = child(path, "spec");
  if (!has(obj, "spec")) return { field: specPath, message: "is required" };
  const s = obj.spec;
  if (!isObject(s)) return { field: specPath, message: `must be an object, got ${typeName(s)}` };
  const meta = isObject(obj.metadata) ? obj.metadata : {};
  const annotations = isObject(meta.annotations) ? meta.annotations : {};
  const semantics = annotations[semanticsAnnotation] === "gateway";
  const name = typeof meta.name === "string" ? meta.name : "";
  const p =
    istioMetadata(obj, path) ??
    (!semantics && !isDns1123Label(name)
      ? {
          field: child(child(path, "metadata"), "name"),
          message: `invalid gateway name: ${JSON.stringify(name)}`,
        }
      : undefined) ??
    (has(s, "selector") ? stringMap()(s.selector, child(specPath, "selector")) : undefined);
  if (p) return p;
  const serversPath = child(specPath, "servers");
  const servers = s.servers ?? [];
  if (!Array.isArray(servers))
    return { field: serversPath, message: `must be an array, got ${typeName(servers)}` };
  if (servers.length === 0) return { field: serversPath, message: "gateway must have at least one server" };
  return (
    eachOf(servers, serversPath, (v, at) => server(v, at, semantics)) ?? uniquePortNames(servers, serversPath)
  );
};

/** validateServer: hosts, port, bind, TLS, and TLS settings only where the protocol takes them. */
function server(v: unknown, path: string, semantics: boolean): P {
  if (!isObject(v)) return { field: path, message: `must be an object, got ${typeName(v)}` };
  const at = (k: string) => child(path, k);
  // The CRD requires both; istiod's own messages follow for what the CRD lets through.
  for (const k of ["port", "hosts"]) if (!has(v, k)) return { field: at(k), message: "is required" };
  const hosts = v.hosts;
  if (!Array.isArray(hosts))
    return { field: at("hosts"), message: `must be an array, got ${typeName(hosts)}` };
  if (hosts.length === 0)
    return { field: at("hosts"), message: "server config must contain at least one host" };
  const bind = v.bind ?? "";
  if (typeof bind !== "string")
    return { field: at("bind"), message: `must be a string, got ${typeName(bind)}` };
  for (const k of ["name", "defaultEndpoint"])
    if (has(v, k) && typeof v[k] !== "string")
      return { field: at(k), message: `must be a string, got ${typeName(v[k])}` };
  const p =
    eachOf(hosts, at("hosts"), (h, hp) => gatewayHost(h, hp, semantics)) ??
    serverPort(v.port, at("port"), bind) ??
    serverBind(v.port as Record<string, unknown>, bind, path) ??
    (has(v, "tls") ? gatewayServerTls(v.tls, at("tls")) : undefined);
  if (p) return p;
  const protocol = parseProtocol(str(v.port as Record<string, unknown>, "protocol"));
  const tls = isObject(v.tls) ? v.tls : undefined;
  if ((protocol === "HTTPS" || protocol === "TLS") && !tls)
    return { field: at("tls"), message: "server must have TLS settings for HTTPS/TLS protocols" };
  if (protocol === "HTTPS" || protocol === "TLS" || !tls) return undefined;
  if (!isHttp(protocol))
    return { field: at("tls"), message: "server cannot have TLS settings for non HTTPS/TLS ports" };
  // A plain HTTP server may carry only a redirect: a passthrough mode (the default) and no certificates.
  const passthrough = ["", "PASSTHROUGH", "AUTO_PASSTHROUGH"].includes(str(tls, "mode"));
  if (!passthrough || ["caCertificates", "privateKey", "serverCertificate"].some((k) => str(tls, k) !== ""))
    return { field: at("tls"), message: "server cannot have TLS settings for plain text HTTP ports" };
  return undefined;
}

/** protocol.IsHTTP. */
export function isHttp(protocol: string): boolean {
  return ["HTTP", "HTTP2", "HTTP_PROXY", "GRPC", "GRPC-Web"].includes(protocol);
}

/**
 * ValidateNamespaceSlashWildcardHostname for gateways: `<ns>/<host>` with ns `*`, `.`, a DNS label
 * (or `~` on a converted Gateway API gateway), or a bare host; the host an FQDN, `*` or an IP address.
 */
export function gatewayHost(v: unknown, path: string, semantics = false): P {
  if (typeof v !== "string") return { field: path, message: `must be a string, got ${typeName(v)}` };
  const slash = v.indexOf("/");
  if (slash < 0) return hostPart(v, path);
  const ns = v.slice(0, slash);
  const name = v.slice(slash + 1);
  if (ns === "" || name === "")
    return { field: path, message: "config namespace and dnsName in host entry cannot be empty" };
  if (ns !== "*" && ns !== "." && (ns !== "~" || !semantics) && !isDns1123Label(ns))
    return { field: path, message: `invalid namespace value ${quote(ns)} in gateway` };
  return hostPart(name, path);
}

/** validateSidecarOrGatewayHostnamePart for a gateway: not a short name, a domain or an IP, no partial wildcard. */
function hostPart(host: string, path: string): P {
  if (host !== "*" && !host.includes("."))
    return { field: path, message: "short names (non FQDN) are not allowed" };
  const why = goIpFamily(host) ? undefined : wildcardDomainProblem(host);
  const partial = why ?? partialWildcardProblem(host);
  return partial ? { field: path, message: partial } : undefined;
}

/** validateServerPort, after the CRD's required number, protocol and name. */
function serverPort(v: unknown, path: string, bind: string): P {
  if (!isObject(v)) return { field: path, message: `must be an object, got ${typeName(v)}` };
  const at = (k: string) => child(path, k);
  for (const k of ["number", "protocol", "name"])
    if (!has(v, k)) return { field: at(k), message: "is required" };
  for (const k of ["protocol", "name"])
    if (typeof v[k] !== "string") return { field: at(k), message: `must be a string, got ${typeName(v[k])}` };
  const p =
    uint32(v.number, at("number")) ??
    (has(v, "targetPort") ? uint32(v.targetPort, at("targetPort")) : undefined);
  if (p) return p;
  if (parseProtocol(v.protocol as string) === "UnsupportedProtocol")
    return {
      field: at("protocol"),
      message: `invalid protocol ${JSON.stringify(v.protocol)}, supported protocols are HTTP, HTTP2, GRPC, GRPC-WEB, MONGO, REDIS, MYSQL, TCP`,
    };
  if ((v.number as number) > 0 || !bind.startsWith(unixPrefix)) {
    const q = portNumber(v.number, at("number"));
    if (q) return q;
  }
  if (((v.targetPort as number | undefined) ?? 0) > 0)
    return { field: at("targetPort"), message: "targetPort has no impact on Gateways" };
  if (v.name === "") return { field: at("name"), message: "port name must be set" };
  return undefined;
}

/** validateServerBind: a Unix socket (with port number 0) or an IP address. */
function serverBind(port: Record<string, unknown>, bind: string, server: string): P {
  const at = child(server, "bind");
  if (bind.startsWith(unixPrefix)) {
    const p = unixAddress(bind.slice(unixPrefix.length), at);
    if (p) return p;
    return port.number !== 0
      ? {
          field: child(child(server, "port"), "number"),
          message: "port number must be 0 for unix domain socket",
        }
      : undefined;
  }
  return bind === "" || goIpFamily(bind) ? undefined : { field: at, message: `${bind} is not a valid IP` };
}

/** Port names in servers are unique. */
function uniquePortNames(servers: unknown[], path: string): P {
  const seen = new Set<string>();
  for (let i = 0; i < servers.length; i++) {
    const s = servers[i] as Record<string, unknown>;
    const name = str(s.port as Record<string, unknown>, "name");
    if (seen.has(name))
      return {
        field: `${path}[${i}].port.name`,
        message: `port names in servers must be unique: duplicate name ${name}`,
      };
    seen.add(name);
  }
  return undefined;
}
