/**
 * The domains of a sidecar's outbound virtual host, as istiod builds them for an Envoy sidecar
 * (pilot/pkg/networking/core/httproute.go: generateVirtualHostDomains, GenerateAltVirtualHosts,
 * generateAltVirtualHostsForKubernetesService, dedupeDomains). An Envoy sidecar ignores the port in
 * host matching (SidecarIgnorePort, and the RouteConfiguration sets ignore_port_in_host_matching),
 * so on a listener port no domain carries `:<port>`.
 */

/** What the domains of one service depend on. */
export interface DomainInputs {
  hostname: string;
  /** The service's VIPs for the proxy (ClusterIPs); `0.0.0.0` and "" are left out. */
  addresses: readonly string[];
  /** A Kubernetes service resolved by passthrough (headless): each domain also as `*.<domain>`. */
  headlessKubernetes: boolean;
}

/**
 * The proxy's DNS domain, `<namespace>.svc.<suffix>` (istiod's proxy.DNSDomain for a Kubernetes
 * pod), which decides the short names a service gets.
 */
export function proxyDnsDomain(namespace: string, domainSuffix: string): string {
  return `${namespace}.svc.${domainSuffix}`;
}

/**
 * generateVirtualHostDomains without ports: the host, its alternative names for the proxy's DNS
 * domain, for a headless Kubernetes service `*.` + each of those, then the VIPs. Also returns the
 * alternative names alone (dedupeDomains needs them).
 */
export function serviceDomains(s: DomainInputs, dnsDomain: string): { domains: string[]; alt: string[] } {
  const alt = altVirtualHosts(s.hostname, dnsDomain);
  const domains = [s.hostname, ...alt];
  if (s.headlessKubernetes) domains.push(...domains.map((d) => `*.${d}`));
  for (const a of s.addresses) if (a !== "" && a !== "0.0.0.0") domains.push(ipv6Compliant(a));
  return { domains, alt };
}

/**
 * GenerateAltVirtualHosts for a proxy whose DNS domain holds `.svc.` (a Kubernetes pod): only a
 * host sharing the `.svc.<suffix>` tail is expanded; in the proxy's namespace to `name`,
 * `name.ns.svc`, `name.ns`; in another to `name.ns`, `name.ns.svc`. Any other host: none.
 */
export function altVirtualHosts(hostname: string, dnsDomain: string): string[] {
  const id = dnsDomain.indexOf(".svc.");
  if (id < 0) return genericAltHosts(hostname, dnsDomain);
  if (!hostname.endsWith(dnsDomain.slice(id))) return [];
  const ih = hostname.indexOf(".svc.");
  if (ih <= 0) return [];
  const ns = hostname.indexOf(".");
  if (ns + 1 >= hostname.length || ns + 1 > ih) return [];
  const nameNs = hostname.slice(0, ih);
  if (hostname.slice(ns + 1, ih) === dnsDomain.slice(0, id))
    return [hostname.slice(0, ns), `${nameNs}.svc`, nameNs];
  return [nameNs, `${nameNs}.svc`];
}

/**
 * GenerateAltVirtualHosts for a DNS domain without `.svc.`: the labels the host does not share with
 * the domain's tail, and with two of them also that plus the first shared label.
 */
function genericAltHosts(hostname: string, dnsDomain: string): string[] {
  const h = hostname.split(".").reverse();
  const d = dnsDomain.split(".").reverse();
  let shared = 0;
  while (shared < Math.min(h.length, d.length) && h[shared] === d[shared]) shared++;
  if (shared === 0) return [];
  const unique = h.slice(shared).reverse();
  const out = [unique.join(".")];
  if (unique.length === 2) out.push(`${unique.join(".")}.${h[shared - 1]}`);
  return out;
}

/**
 * dedupeDomains: drops a domain an earlier virtual host of the same RouteConfiguration already has
 * (case-insensitively, recorded in `seen`), and an alternative name that is itself a known FQDN (so
 * `foo.com.cluster.local`'s short form never shadows the real `foo.com`).
 */
export function dedupeDomains(
  domains: readonly string[],
  seen: Set<string>,
  alt: readonly string[],
  knownFqdns: ReadonlySet<string>,
): string[] {
  const out: string[] = [];
  for (const d of domains) {
    const lower = d.toLowerCase();
    if (seen.has(lower)) continue;
    if (alt.includes(d) && knownFqdns.has(d)) continue;
    out.push(d);
    seen.add(lower);
  }
  return out;
}

/** util.IPv6Compliant: an IPv6 address in brackets, as a Host header carries it. */
function ipv6Compliant(address: string): string {
  return address.includes(":") && !address.startsWith("[") ? `[${address}]` : address;
}
