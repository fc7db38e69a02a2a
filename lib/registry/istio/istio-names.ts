/**
 * The name syntaxes istiod's validation uses, which are not Kubernetes' (lib/registry/names.ts):
 * pkg/config/labels (DNS-1123 labels of either case, wildcard labels, label maps) and the host
 * checks of pkg/config/validation/agent (ValidateWildcardDomain, ValidateFQDN,
 * ValidatePartialWildCard, ValidateIPSubnet). Each returns istiod's message, or undefined. Pure.
 */
import { parseIp } from "../../model/ip.ts";

const label = "[a-zA-Z0-9](?:[-a-zA-Z0-9]*[a-zA-Z0-9])?";
const labelSyntax = new RegExp(`^${label}$`);
const wildcardLabelSyntax = new RegExp(`^(?:\\*|(?:\\*|\\*-)?${label})$`);
const qualifiedName = "(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const tagKeySyntax = new RegExp(`^(${label}(?:\\.${label})*/)?(${qualifiedName})$`);
const labelValueSyntax = new RegExp(`^(?:${qualifiedName})?$`);

/** labels.IsDNS1123Label: at most 63 letters (either case), digits and `-`, alphanumeric at both ends. */
export function isDns1123Label(s: string): boolean {
  return s.length <= 63 && labelSyntax.test(s);
}

/** labels.IsWildcardDNS1123Label: `*`, or a DNS-1123 label that may start with `*` or `*-`. */
function isWildcardDns1123Label(s: string): boolean {
  return s.length <= 63 && wildcardLabelSyntax.test(s);
}

/** CheckDNS1123Preconditions: not empty, at most 255 bytes. */
function preconditions(name: string): string | undefined {
  if (name.length > 255) return `domain name "${name}" too long (max 255)`;
  if (name === "") return "empty domain name not allowed";
  return undefined;
}

/** ValidateDNS1123Labels: labels separated by dots, the last may be empty, the top level not a number. */
function dnsLabelsProblem(domain: string): string | undefined {
  const parts = domain.split(".");
  const top = parts[parts.length - 1] as string;
  if (isGoInt(top))
    return `domain name "${domain}" invalid (top level domain "${top}" cannot be all-numeric)`;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as string;
    if (i === parts.length - 1 && part === "") return undefined;
    if (!isDns1123Label(part)) return `domain name "${domain}" invalid (label "${part}" invalid)`;
  }
  return undefined;
}

/** What Go's strconv.Atoi accepts: an optional sign and decimal digits (64-bit range ignored). */
function isGoInt(s: string): boolean {
  return /^[+-]?[0-9]+$/.test(s);
}

/** ValidateFQDN. A single label passes, as in istiod. */
export function fqdnProblem(name: string): string | undefined {
  return preconditions(name) ?? dnsLabelsProblem(name);
}

/** ValidateWildcardDomain: an FQDN whose first label may be a wildcard label (`*`, `*.a.b`, `*x.a`). */
export function wildcardDomainProblem(domain: string): string | undefined {
  const p = preconditions(domain);
  if (p) return p;
  const dot = domain.indexOf(".");
  const first = dot < 0 ? domain : domain.slice(0, dot);
  if (!isWildcardDns1123Label(first)) return `domain name "${domain}" invalid (label "${first}" invalid)`;
  return dot < 0 ? undefined : dnsLabelsProblem(domain.slice(dot + 1));
}

/** ValidatePartialWildCard: a `*` anywhere but as the whole host or a leading `*.` (a warning in most kinds). */
export function partialWildcardProblem(host: string): string | undefined {
  return host.includes("*") && host.length !== 1 && !host.startsWith("*.")
    ? `partial wildcard "${host}" not allowed`
    : undefined;
}

/** How ip.ts says an address is IPv4-mapped IPv6, which Kubernetes refuses and Go accepts. */
const ipv4MappedReason = "IPv4-mapped IPv6 address is not allowed";

/**
 * Go's netip.ParseAddr, which istiod uses (netutil.IsValidIPAddress, ValidateIPAddress): the
 * address syntax Kubernetes accepts (ip.ts), plus what Kubernetes refuses and Go does not, an IPv6
 * zone (`fe80::1%eth0`) and an IPv4-mapped IPv6 address. Gives the family, or undefined.
 */
export function goIpFamily(text: string): "IPv4" | "IPv6" | undefined {
  const zone = text.indexOf("%");
  const addr = zone >= 0 ? text.slice(0, zone) : text;
  if (zone >= 0 && (zone === text.length - 1 || !addr.includes(":"))) return undefined;
  const r = parseIp(addr);
  if (r.ok) return r.family;
  return r.reason === ipv4MappedReason ? "IPv6" : undefined;
}

/** ValidateIPAddress. */
function ipProblem(addr: string): string | undefined {
  return goIpFamily(addr) ? undefined : `${addr} is not a valid IP`;
}

/** ValidateIPSubnet: an IP address, or a CIDR block (netip.ParsePrefix) when the string holds one `/`. */
export function ipSubnetProblem(subnet: string): string | undefined {
  const parts = subnet.split("/");
  if (parts.length !== 2) return ipProblem(subnet);
  const [addr, bits] = parts as [string, string];
  const family = addr.includes("%") ? undefined : goIpFamily(addr);
  const max = family === "IPv4" ? 32 : 128;
  return family && /^(0|[1-9][0-9]{0,2})$/.test(bits) && Number(bits) <= max
    ? undefined
    : `${subnet} is not a valid CIDR block`;
}

/**
 * labels.Instance.Validate: keys `[dns-prefix/]name` (prefix ≤ 253, name ≤ 63), values label values
 * of any length. Gives the first bad key and istiod's message, or undefined.
 */
export function labelsProblem(
  labels: Readonly<Record<string, unknown>>,
): { key: string; message: string } | undefined {
  for (const [k, v] of Object.entries(labels)) {
    const m = tagKeySyntax.exec(k);
    if (!m) return { key: k, message: `invalid tag key: "${k}"` };
    if (m[1] && m[1].length - 1 > 253)
      return { key: k, message: `invalid tag key: "${k}" (DNS prefix is too long)` };
    if ((m[2] as string).length > 63)
      return { key: k, message: `invalid tag key: "${k}" (name is too long)` };
    if (typeof v !== "string" || !labelValueSyntax.test(v))
      return { key: k, message: `invalid tag value: ${JSON.stringify(v)}` };
  }
  return undefined;
}
