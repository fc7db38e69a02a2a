/**
 * The Gateways a gateway proxy gets, merged as istiod merges them (pilot/pkg/model/gateway.go
 * mergeGateways, gatewayRDSRouteName, GetSNIHostsForServer, CheckDuplicates, resolvePorts):
 * servers grouped by (resolved port, bind); plaintext HTTP servers of one port share the route
 * `http.<port>`; each terminating HTTPS server gets `https.<port>.<portName>.<gw>.<ns>`; TLS servers
 * of one port are told apart by SNI, a host another TLS server of the port already holds skips the
 * server; a protocol conflict on one port and bind keeps the first server (a line in `skipped`, as
 * istiod logs it and counts a rejected config). Pure.
 */
import type { GatewayModel, GatewayServer } from "./gateway.ts";
import { isHttpProtocol, isHttpServer, isPassthroughServer, isTlsServer, splitHost } from "./gateway.ts";

/** A listener's identity: resolved port number, the first server's protocol, its bind. */
export interface ServerPort {
  number: number;
  protocol: string;
  bind: string;
}

/** One server as merged: its Gateway (`<ns>/<name>`), RDS name (HTTP/HTTPS), SNI hosts (TLS). */
export interface MergedServer {
  server: GatewayServer;
  gateway: GatewayModel;
  /** `<namespace>/<name>`: what VirtualServices name in `gateways`. */
  gatewayName: string;
  routeName: string;
  /** GetSNIHostsForServer: hosts without their namespace, unique, sorted (TLS servers). */
  sniHosts: string[];
}

/** The servers of one listener. */
export interface MergedPort {
  port: ServerPort;
  servers: MergedServer[];
  /** The plaintext servers' shared route name (`http.<port>`), "" for TLS ports. */
  routeName: string;
}

/** A proxy's merged Gateways. */
export interface MergedGateway {
  /** Listeners in the order their first server came. */
  ports: MergedPort[];
  /** RDS name ▶ the servers it serves. */
  serversByRoute: ReadonlyMap<string, readonly MergedServer[]>;
  /** Whether a server is AUTO_PASSTHROUGH (its SNI DNAT clusters are built). */
  autoPassthrough: boolean;
  /** One sentence per server left out (conflicts, duplicate SNI hosts). */
  skipped: string[];
}

/** A service port the proxy serves and the port its endpoint listens on (resolvePorts). */
export interface PortMapping {
  port: number;
  targetPort: number;
}

/**
 * resolvePorts with the legacy (label) selector: the first instance whose service port is the
 * server's gives its target port, else the port as written.
 */
export function resolvePort(number: number, instances: readonly PortMapping[]): number {
  return instances.find((i) => i.port === number)?.targetPort ?? number;
}

/** gatewayRDSRouteName: `http.<port>[.<bind>]`, `https.<port>.<portName>.<gw>.<ns>[.<bind>]`, else "". */
export function gatewayRouteName(s: GatewayServer, resolved: number, g: GatewayModel): string {
  const bind = s.bind ? `.${s.bind}` : "";
  if (isHttpProtocol(s.port.protocol)) return `http.${resolved}${bind}`;
  if (s.port.protocol.toUpperCase() === "HTTPS" && !isPassthroughServer(s))
    return `https.${s.port.number}.${s.port.name}.${g.name}.${g.namespace}${bind}`;
  return "";
}

/** GetSNIHostsForServer: the hosts without their namespace prefix, unique, sorted. */
export function sniHostsOf(s: GatewayServer): string[] {
  if (!s.tls) return [];
  return [...new Set(s.hosts.map((h) => splitHost(h).host))].sort();
}

/** canMergeProtocols: both HTTP, or the same protocol and the new one HTTP. */
function canMerge(current: string, next: string): boolean {
  return (isHttpProtocol(current) || current.toUpperCase() === next.toUpperCase()) && isHttpProtocol(next);
}

/** Merges `gateways` (already in istiod's order: oldest first) for one proxy (see the module comment). */
export function mergeGateways(
  gateways: readonly GatewayModel[],
  instances: readonly PortMapping[] = [],
): MergedGateway {
  const byKey = new Map<string, MergedPort>();
  const ports: MergedPort[] = [];
  const plaintext = new Map<number, ServerPort>();
  const seenPorts = new Set<number>();
  const nonPlainBinds = new Map<number, Set<string>>();
  const serversByRoute = new Map<string, MergedServer[]>();
  const tlsHosts = new Map<number, Map<string, string>>();
  const skipped: string[] = [];
  let autoPassthrough = false;
  const keyOf = (p: ServerPort) => `${p.number}|${p.protocol}|${p.bind}`;
  const add = (p: ServerPort, m: MergedServer, routeName: string) => {
    const merged: MergedPort = { port: p, servers: [m], routeName };
    byKey.set(keyOf(p), merged);
    ports.push(merged);
  };

  for (const g of gateways) {
    const gatewayName = `${g.namespace}/${g.name}`;
    for (const s of g.servers) {
      const number = resolvePort(s.port.number, instances);
      const routeName = gatewayRouteName(s, number, g);
      const bind = s.bind ?? "";
      const where = `${gatewayName} port ${s.port.name}.${number}.${s.port.protocol}`;
      const m: MergedServer = { server: s, gateway: g, gatewayName, routeName, sniHosts: sniHostsOf(s) };
      if (s.tls) {
        const known = tlsHosts.get(number) ?? new Map<string, string>();
        tlsHosts.set(number, known);
        const dup = s.hosts.filter((h) => known.get(h) === bind);
        if (dup.length > 0) {
          skipped.push(`skipping server on gateway ${gatewayName}, duplicate host names: ${dup.join(", ")}`);
          continue;
        }
        for (const h of s.hosts) known.set(h, bind);
        if (s.tls.mode === "AUTO_PASSTHROUGH") autoPassthrough = true;
      }
      const sp: ServerPort = { number, protocol: s.port.protocol, bind };
      const http = isHttpServer(s);
      if (!seenPorts.has(number)) {
        seenPorts.add(number);
        if (!isTlsServer(s)) plaintext.set(number, sp);
        if (http) serversByRoute.set(routeName, [m]);
        add(sp, m, routeName);
        continue;
      }
      const current = plaintext.get(number);
      if (current) {
        if (!canMerge(current.protocol, s.port.protocol) && current.bind === bind) {
          skipped.push(
            `skipping server on gateway ${where}: conflict with existing server ${current.number}.${current.protocol}`,
          );
          continue;
        }
        if (routeName === "" && current.bind === bind) {
          skipped.push(`skipping server on gateway ${where}: could not build RDS name from server`);
          continue;
        }
        const target = current.bind === bind ? byKey.get(keyOf(current)) : byKey.get(keyOf(sp));
        if (target) {
          target.servers.push(m);
          if (current.bind !== bind) target.routeName = routeName;
          serversByRoute.set(routeName, [...(serversByRoute.get(routeName) ?? []), m]);
        } else {
          if (!isTlsServer(s)) plaintext.set(number, sp);
          if (http) serversByRoute.set(routeName, [m]);
          add(sp, m, routeName);
        }
        continue;
      }
      if (!isTlsServer(s)) {
        plaintext.set(number, sp);
        if (http) serversByRoute.set(routeName, [m]);
        add(sp, m, routeName);
        continue;
      }
      if (http) {
        if (routeName === "") {
          skipped.push(`skipping server on gateway ${where}: could not build RDS name from server`);
          continue;
        }
        if (serversByRoute.has(routeName)) {
          skipped.push(`skipping server on gateway ${where}: non unique port name for HTTPS port`);
          continue;
        }
        serversByRoute.set(routeName, [m]);
      }
      const binds = nonPlainBinds.get(number);
      const newBind = binds ? !binds.has(bind) : true;
      if (binds) binds.add(bind);
      else nonPlainBinds.set(number, new Set([bind]));
      if (s.tls === undefined && !newBind) {
        skipped.push(`TLS server without TLS options ${where}`);
        continue;
      }
      const existing = byKey.get(keyOf(sp));
      if (existing) existing.servers.push(m);
      else add(sp, m, "");
    }
  }
  return { ports, serversByRoute, autoPassthrough, skipped };
}
