/**
 * The value syntaxes security.istio.io policies share, as istiod checks them
 * (pkg/config/security/security.go): empty values, service accounts, trust domains, path
 * templates, IPs and CIDRs, ports, and the `when` attributes Istio knows. Each gives istiod's
 * message for the first bad value, or undefined. Pure.
 */
import { goIpFamily } from "./istio-names.ts";

/** CheckEmptyValues. */
export function emptyValueProblem(key: string, values: readonly string[]): string | undefined {
  return values.includes("") ? `empty value not allowed, found in ${key}` : undefined;
}

/** CheckWildcardValues: non-empty, at most one `*`, only at the start or the end. */
export function wildcardValueProblem(key: string, values: readonly string[]): string | undefined {
  const empty = emptyValueProblem(key, values);
  if (empty) return empty;
  for (const v of values) {
    const count = v.split("*").length - 1;
    if (count > 1) return `at most one wildcard is allowed, found in ${key}: ${JSON.stringify(v)}`;
    if (count === 1 && v !== "*" && !v.startsWith("*") && !v.endsWith("*"))
      return `wildcard is only allowed at the start or end, found in ${key}: ${JSON.stringify(v)}`;
  }
  return undefined;
}

/** CheckTrustDomainValues: wildcard values without `/`. */
export function trustDomainProblem(key: string, values: readonly string[]): string | undefined {
  const bad = wildcardValueProblem(key, values);
  if (bad) return bad;
  const slash = values.find((v) => v.includes("/"));
  return slash === undefined
    ? undefined
    : `trust domain must not contain '/', found in ${key}: ${JSON.stringify(slash)}`;
}

/** CheckServiceAccount: at most 16 values, each `sa` or `ns/sa`, no `*`, at most 320 characters. */
export function serviceAccountProblem(key: string, values: readonly string[]): string | undefined {
  if (values.length > 16) return "may not have more than 16 values";
  const format = "expected format 'serviceAccount' or 'namespace/serviceAccount'";
  for (const v of values) {
    if (v === "") return `empty value not allowed, found in ${key}`;
    if (v.includes("*")) return `wildcard not allowed, found in ${key}`;
    const slashes = v.split("/").length - 1;
    if (slashes > 1) return `${format}, found ${JSON.stringify(v)} in ${key}`;
    if (v.length > 320) return `value cannot exceed 320 characters, found ${JSON.stringify(v)} in ${key}`;
    if (slashes === 1) {
      const [ns, sa] = v.split("/") as [string, string];
      if (ns === "") return `${format}, found empty namespace ${JSON.stringify(v)} in ${key}`;
      if (sa === "") return `${format}, found empty serviceAccount ${JSON.stringify(v)} in ${key}`;
    }
  }
  return undefined;
}

const matchOne = "{*}";
const matchAny = "{**}";
/** RFC 3986 pchar, as Envoy's URI templates accept a literal segment. */
const validLiteral = /^[a-zA-Z0-9\-._~%!$&'()+,;:@=]+$/;

/** CheckValidPathTemplate: `{*}` and `{**}` whole segments, `{**}` last, other segments literal. */
export function pathTemplateProblem(key: string, paths: readonly string[]): string | undefined {
  for (const raw of paths) {
    const template = raw.includes(matchOne) || raw.includes(matchAny);
    const path = raw.replace(/^\/+|\/+$/g, "");
    let sawAny = false;
    for (const glob of path.split("/")) {
      if (glob === matchOne && !sawAny) continue;
      if (glob === matchAny && !sawAny) {
        sawAny = true;
        continue;
      }
      if (glob === matchAny || glob === matchOne)
        return `invalid or unsupported path ${path}, found in ${key}. {**} is not the last operator`;
      if (/[{}]/.test(glob))
        return `invalid or unsupported path ${path}, found in ${key}. Contains '{' or '}' beyond a supported path template`;
      if (template && !validLiteral.test(glob))
        return `invalid or unsupported path ${path}, found in ${key}. Contains segment ${glob} with invalid string literal`;
    }
  }
  return undefined;
}

/** netip.ParsePrefix's verdict on `v` (which holds a `/`), as Go words it, or undefined. */
function prefixProblem(v: string): string | undefined {
  const at = v.lastIndexOf("/");
  const addr = v.slice(0, at);
  const bits = v.slice(at + 1);
  const err = (why: string) => `netip.ParsePrefix(${JSON.stringify(v)}): ${why}`;
  if (addr.includes("%")) return err("IPv6 zones cannot be present in a prefix");
  const family = goIpFamily(addr);
  if (!family) return err(`ParseAddr(${JSON.stringify(addr)}): unable to parse IP`);
  // strconv.Atoi's range ends far past any prefix length: a longer number is only "out of range".
  if (!/^(0|[1-9][0-9]{0,17})$/.test(bits)) return err(`bad bits after slash: ${JSON.stringify(bits)}`);
  return Number(bits) > (family === "IPv4" ? 32 : 128) ? err("prefix length out of range") : undefined;
}

/** ValidateIPs: each an address (netip.ParseAddr) or, holding a `/`, a CIDR (netip.ParsePrefix). */
export function ipsProblem(ips: readonly string[]): string | undefined {
  for (const v of ips) {
    if (v.includes("/")) {
      const why = prefixProblem(v);
      if (why) return `bad CIDR range (${v}): ${why}`;
    } else if (!goIpFamily(v)) return `bad IP address (${v})`;
  }
  return undefined;
}

/** ValidatePorts: each a decimal 0-65535 (strconv.ParseUint, base 10, 32 bits). */
export function portsProblem(ports: readonly string[]): string | undefined {
  for (const p of ports) {
    if (!/^[0-9]+$/.test(p))
      return `bad port (${p}): strconv.ParseUint: parsing ${JSON.stringify(p)}: invalid syntax`;
    const n = BigInt(p);
    if (n > 0xffffffffn)
      return `bad port (${p}): strconv.ParseUint: parsing ${JSON.stringify(p)}: value out of range`;
    if (n > 65535n) return `bad port (${p}): <nil>`;
  }
  return undefined;
}

/** validateMapKey: `name[key]` with a non-empty key. */
function mapKeyProblem(key: string): string | undefined {
  const open = key.indexOf("[");
  return key.endsWith("]") && open > 0 && open < key.length - 2
    ? undefined
    : `bad key (${key}): should have format a[b]`;
}

/** Attributes that take any value (besides the empty one). */
const plainAttributes = new Set([
  "source.namespace",
  "source.principal",
  "request.auth.principal",
  "request.auth.audiences",
  "request.auth.presenter",
  "connection.sni",
]);

/** ValidateAttribute: a `when` key Istio knows, with values of its syntax. */
export function attributeProblem(key: string, values: readonly string[]): string | undefined {
  const empty = emptyValueProblem(key, values);
  if (empty) return empty;
  if (key.startsWith("request.headers")) return mapKeyProblem(key);
  if (key === "source.ip" || key === "remote.ip" || key === "destination.ip") return ipsProblem(values);
  if (plainAttributes.has(key)) return undefined;
  if (key === "source.serviceAccount") return serviceAccountProblem(key, values);
  if (key === "source.trustDomain") return wildcardValueProblem(key, values);
  if (key.startsWith("request.auth.claims")) return mapKeyProblem(key);
  if (key === "destination.port") return portsProblem(values);
  if (key.startsWith("experimental.envoy.filters.")) return mapKeyProblem(key);
  if (key === "destination.namespace") return `attribute ${key} is replaced by the metadata.namespace`;
  if (key.startsWith("destination.labels")) return `attribute ${key} is replaced by the workload selector`;
  if (key === "destination.name" || key === "destination.user")
    return `deprecated attribute ${key}: only supported in v1alpha1`;
  return `unknown attribute: ${key}`;
}
