/**
 * The warnings istiod's validation returns beside its verdict, for an object that passed
 * validation: deprecated fields, partial wildcard hosts, selectors without labels, settings that
 * have no effect. Messages are istiod's, prefixed by the field path where istiod names none. Pure
 * and cheap: meant to run once per admitted object, not per watch event.
 */
import { isObject } from "../check.ts";
import { parseProtocol } from "../kube/protocol.ts";
import { partialWildcardProblem } from "./istio-names.ts";
import { isHttp } from "./validate-gateway.ts";
import { securityWarnings } from "./warnings-security.ts";
import { virtualServiceWarnings } from "./warnings-vs.ts";

type Raw = Record<string, unknown>;
const list = (v: unknown): Raw[] => (Array.isArray(v) ? v.filter(isObject) : []);
const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
const str = (o: Raw, k: string): string => (typeof o[k] === "string" ? (o[k] as string) : "");

/** Istio's warnings for a valid object of one of the Istio kinds edgepilot validates; [] for any other kind. */
export function istioWarnings(kind: string, obj: Record<string, unknown>): string[] {
  const spec = isObject(obj.spec) ? obj.spec : undefined;
  if (!spec) return [];
  const meta = isObject(obj.metadata) ? obj.metadata : {};
  const namespace = typeof meta.namespace === "string" ? meta.namespace : "";
  switch (kind) {
    case "VirtualService":
      return virtualServiceWarnings(spec);
    case "DestinationRule":
      return destinationRuleWarnings(spec);
    case "ServiceEntry":
      return serviceEntryWarnings(spec, isObject(meta.labels) ? meta.labels : {});
    case "WorkloadEntry":
      return workloadEntryWarnings(spec, "spec");
    case "Sidecar":
      return sidecarWarnings(spec, namespace);
    case "Gateway":
      return gatewayWarnings(spec);
    case "PeerAuthentication":
    case "AuthorizationPolicy":
      return securityWarnings(kind, spec);
    default:
      return [];
  }
}

const noLabels = "workload selector specified without labels";

function destinationRuleWarnings(s: Raw): string[] {
  const out: string[] = [];
  if (
    isObject(s.workloadSelector) &&
    Object.keys(isObject(s.workloadSelector.matchLabels) ? s.workloadSelector.matchLabels : {}).length === 0
  )
    out.push(`spec.workloadSelector: ${noLabels}`);
  policyWarnings(s.trafficPolicy, "spec.trafficPolicy", out);
  for (const [i, sub] of list(s.subsets).entries())
    policyWarnings(sub.trafficPolicy, `spec.subsets[${i}].trafficPolicy`, out);
  return out;
}

/** validateOutlierDetection and validateLoadBalancer warnings, for a policy and its port-level settings. */
function policyWarnings(p: unknown, path: string, out: string[]): void {
  if (!isObject(p)) return;
  const parts = (v: Raw, at: string) => {
    const od = v.outlierDetection;
    if (isObject(od) && typeof od.consecutiveErrors === "number" && od.consecutiveErrors !== 0)
      out.push(
        `${at}.outlierDetection.consecutiveErrors: outlier detection consecutive errors is deprecated, use consecutiveGatewayErrors or consecutive5xxErrors instead`,
      );
    const lb = isObject(v.loadBalancer) ? v.loadBalancer : {};
    const ch = lb.consistentHash;
    if (isObject(ch) && Number(ch.minimumRingSize ?? 0) !== 0)
      out.push(
        `${at}.loadBalancer.consistentHash.minimumRingSize: consistent hash MinimumRingSize is deprecated, use ConsistentHashLB's RingHash configuration instead`,
      );
    const loc = lb.localityLbSetting;
    if (
      isObject(loc) &&
      (list(loc.failover).length > 0 || strings(loc.failoverPriority).length > 0) &&
      !isObject(od)
    )
      out.push(
        `${at}.loadBalancer.localityLbSetting: outlier detection policy must be provided for failover`,
      );
  };
  parts(p, path);
  for (const [i, pl] of list(p.portLevelSettings).entries()) parts(pl, `${path}.portLevelSettings[${i}]`);
}

function serviceEntryWarnings(s: Raw, labels: Raw): string[] {
  const out: string[] = [];
  const resolution = str(s, "resolution") || "NONE";
  const hosts = strings(s.hosts);
  const addresses = strings(s.addresses);
  const ports = list(s.ports);
  const selector = s.workloadSelector;
  if (isObject(selector) && Object.keys(isObject(selector.labels) ? selector.labels : {}).length === 0)
    out.push(
      `spec.workloadSelector: service entry: ${noLabels}, will be applied to all services in namespace`,
    );
  if (resolution !== "DYNAMIC_DNS")
    hosts.forEach((h, i) => {
      const why = h === "*" ? undefined : partialWildcardProblem(h);
      if (why) out.push(`spec.hosts[${i}]: ${why}`);
    });
  const autoAllocate =
    resolution !== "NONE" &&
    addresses.length === 0 &&
    str(labels, "networking.istio.io/enable-autoallocate-ip").toLowerCase() !== "false";
  ports.forEach((p, i) => {
    const protocol = str(p, "protocol");
    if (addresses.length === 0 && !autoAllocate && (protocol === "" || protocol === "TCP"))
      out.push(
        `spec.ports[${i}]: addresses are required for ports serving TCP (or unset) protocol when IP Autoallocation is not enabled`,
      );
  });
  if (resolution === "NONE" && selector !== undefined && selector !== null)
    out.push("spec.workloadSelector: workloadSelector should not be set when resolution mode is NONE");
  if (resolution === "STATIC")
    for (const [i, e] of list(s.endpoints).entries())
      out.push(...workloadEntryWarnings(e, `spec.endpoints[${i}]`));
  const isTcp = (p: Raw) =>
    ["TCP", "HTTPS", "TLS", "Mongo", "Redis", "MySQL"].includes(parseProtocol(str(p, "protocol")));
  if (
    (resolution === "DNS" || resolution === "DNS_ROUND_ROBIN") &&
    addresses.length > 0 &&
    hosts.length > 1 &&
    ports.some(isTcp)
  )
    out.push(
      "spec: service entry can not have more than one host specified simultaneously with address and tcp port",
    );
  return out;
}

function workloadEntryWarnings(s: Raw, path: string): string[] {
  return str(s, "address") === "" && str(s, "network") !== ""
    ? [`${path}.address: address is unset with network "${str(s, "network")}"`]
    : [];
}

const validCiphers = new Set([
  "ECDHE-ECDSA-AES128-GCM-SHA256",
  "ECDHE-RSA-AES128-GCM-SHA256",
  "ECDHE-ECDSA-AES256-GCM-SHA384",
  "ECDHE-RSA-AES256-GCM-SHA384",
  "ECDHE-ECDSA-CHACHA20-POLY1305",
  "ECDHE-RSA-CHACHA20-POLY1305",
  "ECDHE-ECDSA-AES128-SHA",
  "ECDHE-RSA-AES128-SHA",
  "ECDHE-ECDSA-AES256-SHA",
  "ECDHE-RSA-AES256-SHA",
  "AES128-GCM-SHA256",
  "AES256-GCM-SHA384",
  "AES128-SHA",
  "AES256-SHA",
  "DES-CBC3-SHA",
]);

/** security.IsValidCipherSuite: a known suite, "", "ALL", or an expression starting with an operator. */
const validCipher = (c: string) =>
  c === "" || c === "ALL" || !/^[\p{L}\p{N}]/u.test(c) || validCiphers.has(c);

function sidecarWarnings(s: Raw, namespace: string): string[] {
  const out: string[] = [];
  const selector = s.workloadSelector;
  if (isObject(selector) && Object.keys(isObject(selector.labels) ? selector.labels : {}).length === 0)
    out.push(`spec.workloadSelector: sidecar: ${noLabels}, will be applied to all services in namespace`);
  list(s.ingress).forEach((l, i) => {
    const at = `spec.ingress[${i}]`;
    const port = isObject(l.port) ? l.port : {};
    if (isObject(l.tls)) tlsWarnings(l.tls, `${at}.tls`, out);
    const protocol = str(port, "protocol");
    const p = parseProtocol(protocol);
    if (
      isObject(l.connectionPool) &&
      isObject(l.connectionPool.http) &&
      !["HTTP", "HTTP2", "HTTP_PROXY", "GRPC", "GRPC-Web"].includes(p)
    )
      out.push(
        `${at}.connectionPool.http: sidecar: HTTP connection pool settings are configured for port ${Number(port.number ?? 0)} (${JSON.stringify(str(port, "name"))}) but its protocol is not HTTP (${protocol}); only TCP settings will apply`,
      );
  });
  list(s.egress).forEach((l, i) => {
    const seen = new Map<string, Set<string>>();
    strings(l.hosts).forEach((h, j) => {
      const slash = h.indexOf("/");
      if (slash < 0) return;
      const ns = h.slice(0, slash) === "." ? namespace : h.slice(0, slash);
      const svc = h.slice(slash + 1);
      const names = seen.get(ns) ?? new Set<string>();
      seen.set(ns, names);
      if (svc !== "*" ? names.has(svc) || names.has("*") : names.size > 0)
        out.push(`spec.egress[${i}].hosts[${j}]: duplicated egress host: ${h}`);
      names.add(svc);
    });
    if (seen.get("*")?.has("*") && seen.size !== 1)
      out.push(`spec.egress[${i}].hosts: \`*/*\` host select all resources, no other hosts can be added`);
  });
  return out;
}

/** validateTLSOptions warnings: old TLS versions without ciphers, invalid or duplicate ciphers, ignored certificates. */
function tlsWarnings(t: Raw, path: string, out: string[]): void {
  const ciphers = strings(t.cipherSuites);
  const min = str(t, "minProtocolVersion");
  if ((min === "TLSV1_0" || min === "TLSV1_1") && ciphers.length === 0)
    out.push(
      `${path}: TLS version below TLSV1_2 require setting compatible ciphers as by default they no longer include compatible ciphers.`,
    );
  const invalid = [...new Set(ciphers.filter((c) => !validCipher(c)))].sort();
  if (invalid.length > 0) out.push(`${path}: ignoring invalid cipher suites: [${invalid.join(" ")}]`);
  const valid = ciphers.filter(validCipher);
  const dup = [...new Set(valid.filter((c, i) => valid.indexOf(c) !== i))].sort();
  if (dup.length > 0) out.push(`${path}: ignoring duplicate cipher suites: [${dup.join(" ")}]`);
  const mode = str(t, "mode") || "PASSTHROUGH";
  if (
    (mode === "PASSTHROUGH" || mode === "AUTO_PASSTHROUGH") &&
    (["caCrl", "serverCertificate", "privateKey", "caCertificates", "credentialName"].some(
      (k) => str(t, k) !== "",
    ) ||
      list(t.tlsCertificates).length > 0 ||
      strings(t.credentialNames).length > 0)
  )
    out.push(`${path}: ${mode} mode does not use certificates, they will be ignored`);
}

/** ValidateGateway's warnings: each server's TLS options, then a redirect on a server that is not HTTP. */
function gatewayWarnings(s: Raw): string[] {
  const out: string[] = [];
  const servers = list(s.servers);
  servers.forEach((server, i) => {
    if (isObject(server.tls)) tlsWarnings(server.tls, `spec.servers[${i}].tls`, out);
  });
  servers.forEach((server, i) => {
    const protocol = parseProtocol(str(isObject(server.port) ? server.port : {}, "protocol"));
    if (
      isObject(server.port) &&
      isObject(server.tls) &&
      server.tls.httpsRedirect === true &&
      !isHttp(protocol)
    )
      out.push(
        `spec.servers[${i}].tls.httpsRedirect: tls.httpsRedirect should only be used with http servers`,
      );
  });
  return out;
}
