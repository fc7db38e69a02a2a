/** EDS for proxyless gRPC: one ClusterLoadAssignment per service port from every shard in view. */
import { AddressSchema, SocketAddressSchema } from "../../gen/envoy/config/core/v3/address_pb.ts";
import { LocalitySchema, MetadataSchema } from "../../gen/envoy/config/core/v3/base_pb.ts";
import { HealthStatus } from "../../gen/envoy/config/core/v3/health_check_pb.ts";
import {
  EndpointSchema,
  type LbEndpoint,
  LbEndpointSchema,
  type LocalityLbEndpoints,
  LocalityLbEndpointsSchema,
} from "../../gen/envoy/config/endpoint/v3/endpoint_components_pb.ts";
import {
  type ClusterLoadAssignment,
  ClusterLoadAssignmentSchema,
} from "../../gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import {
  type Endpoint,
  type Locality,
  localityLabel,
  type HealthStatus as ModelHealth,
  parseShardKey,
  type ServicePort,
} from "../../model/index.ts";
import { parseIp } from "../../model/ip.ts";
import { resolvesByDns } from "../../registry/istio/external-services.ts";
import type { NetworkResolver } from "../network-resolve.ts";
import type { Generated, Generator, ServiceView } from "../types.ts";
import { TypeUrl } from "../xds-types.ts";
import {
  blank,
  clusterName,
  compareStrings,
  mergedPorts,
  message,
  sortedServices,
  subsetClusterName,
} from "./shared.ts";

/**
 * Istio's health mapping. TERMINATING is never sent: Istio's EndpointBuilder drops terminating
 * endpoints even when it sends unhealthy ones, so a rollout never looks half unhealthy.
 */
const healthMap: Record<ModelHealth, HealthStatus | undefined> = {
  HEALTHY: HealthStatus.HEALTHY,
  UNHEALTHY: HealthStatus.UNHEALTHY,
  DRAINING: HealthStatus.DRAINING,
  TERMINATING: undefined,
};

const healthRank: Record<ModelHealth, number> = { HEALTHY: 0, UNHEALTHY: 1, DRAINING: 2, TERMINATING: 3 };

/**
 * One ClusterLoadAssignment `outbound|<port>||<host>` per merged service port, ascending by port,
 * also when no endpoint serves the port (an empty assignment, as Istio), each followed by one
 * `outbound|<port>|<subset>|<host>` per subset of the view's DestinationRule (the rule's order),
 * holding the port's endpoints whose labels include all the subset's labels (possibly none). Endpoints come from every
 * shard; an address:port reported twice is served once (grpc-js-xds NACKs duplicates anywhere in
 * the assignment), the first in (address, port, shard key) order winning. Endpoints are grouped
 * by locality, localities sorted by `region/zone/subzone`, each with its locality always set and
 * load_balancing_weight = its endpoint count (grpc-js-xds drops localities without a weight).
 * When the mesh has networks (ctx.networks), each endpoint with a network carries it as
 * filter_metadata `istio` {network}, what split-horizon EDS splits by.
 */
export const endpointGenerator: Generator = {
  typeUrl: TypeUrl.endpoint,
  generate(view, ctx) {
    const ports = mergedPorts(view);
    if (ports.length === 0) return [];
    const networks = ctx.networks;
    const byPort = endpointsByPort(view, ports, networks);
    const withNetwork = networks !== undefined;
    const subsets = view.destinationRule?.subsets ?? [];
    const out: Generated<typeof ClusterLoadAssignmentSchema>[] = [];
    for (const [i, p] of ports.entries()) {
      const name = clusterName(view.hostname, p.port);
      const onPort = byPort[i] as Endpoint[];
      out.push({
        name,
        schema: ClusterLoadAssignmentSchema,
        message: loadAssignment(name, onPort, withNetwork),
      });
      for (const subset of subsets) {
        const sub = subsetClusterName(view.hostname, p.port, subset.name);
        const chosen = onPort.filter((e) => hasLabels(e.labels, subset.labels));
        const message = loadAssignment(sub, chosen, withNetwork);
        out.push({ name: sub, schema: ClusterLoadAssignmentSchema, message });
      }
    }
    return out;
  },
};

/**
 * The endpoints served on each of `ports` (same order): every shard's sendable endpoints on that
 * port, one per address:port, sorted (what the assignment of the port's default cluster holds).
 * With `networks`, each endpoint carries the network it resolves to (a copy when ingest gave none).
 */
export function endpointsByPort(
  view: ServiceView,
  ports: readonly ServicePort[],
  networks?: NetworkResolver,
): Endpoint[][] {
  return collect(view, ports, networks).map((onPort) => dedupe(onPort.sort(compareCandidates)));
}

/** Whether `labels` carry every label of `selector` (Istio's labels.Instance.SubsetOf; empty selects all). */
export function hasLabels(
  labels: Readonly<Record<string, string>>,
  selector: Readonly<Record<string, string>>,
): boolean {
  for (const key in selector) if (!Object.hasOwn(labels, key) || labels[key] !== selector[key]) return false;
  return true;
}

interface Candidate {
  shardKey: string;
  endpoint: Endpoint;
}

/**
 * Every sendable endpoint of every shard, per port of `ports` (same order): those whose port name
 * is the name the endpoint's own cluster gives the port (a shard without a Service record in view
 * falls back to the merged port's name). Unsorted.
 */
function collect(
  view: ServiceView,
  ports: readonly ServicePort[],
  networks?: NetworkResolver,
): Candidate[][] {
  const out: Candidate[][] = ports.map(() => []);
  const services = sortedServices(view);
  // Hostnames (a DNS ServiceEntry's) are for a client to resolve: only a DNS host's clusters use
  // them; an EDS assignment carries IP addresses only, as Envoy requires.
  const hostnamesServed = resolvesByDns(services);
  for (const [shardKey, endpoints] of Object.entries(view.shards?.shards ?? {})) {
    const { provider, cluster } = parseShardKey(shardKey);
    const ipOnly = provider === "External" && !hostnamesServed;
    const record = services.find((s) => s.clusterId === cluster);
    // Endpoints name ports as their own cluster's Service does: each port's name, once per shard.
    const names = ports.map((p) => (record ? record.ports.find((rp) => rp.port === p.port)?.name : p.name));
    for (const found of endpoints) {
      if (healthMap[found.health] === undefined) continue;
      if (ipOnly && !parseIp(found.address).ok) continue;
      const endpoint = networks ? resolved(found, networks.resolve(found, provider, cluster).network) : found;
      for (let i = 0; i < names.length; i++)
        if (names[i] === endpoint.servicePortName) out[i]?.push({ shardKey, endpoint });
    }
  }
  return out;
}

/** `e` with `network` (the stored endpoint itself when it already has it: stored values are read-only). */
function resolved(e: Endpoint, network: string): Endpoint {
  return network === (e.network ?? "") ? e : { ...e, network };
}

function compareCandidates(a: Candidate, b: Candidate): number {
  const x = a.endpoint;
  const y = b.endpoint;
  return (
    compareStrings(x.address, y.address) ||
    x.port - y.port ||
    compareStrings(a.shardKey, b.shardKey) ||
    healthRank[x.health] - healthRank[y.health] ||
    compareStrings(localityLabel(x.locality), localityLabel(y.locality)) ||
    compareStrings(x.servicePortName, y.servicePortName) ||
    compareStrings(x.serviceAccount, y.serviceAccount)
  );
}

/**
 * Keeps the first of each address:port. Input is sorted by address, then port, so the endpoints
 * that share one are adjacent: comparing each with the last kept is enough, and the output stays sorted.
 */
function dedupe(sorted: Candidate[]): Endpoint[] {
  const out: Endpoint[] = [];
  let last: Endpoint | undefined;
  for (const { endpoint } of sorted) {
    if (last !== undefined && last.address === endpoint.address && last.port === endpoint.port) continue;
    out.push(endpoint);
    last = endpoint;
  }
  return out;
}

/**
 * The ClusterLoadAssignment `name` of `endpoints`: grouped by locality, localities sorted, each
 * weighted by its endpoint count (also the inline assignment of a LOGICAL_DNS cluster). With
 * `withNetwork`, an endpoint's network is written as its `istio` metadata.
 */
export function loadAssignment(
  name: string,
  endpoints: readonly Endpoint[],
  withNetwork = false,
): ClusterLoadAssignment {
  const byLocality = new Map<string, Endpoint[]>();
  // Neighbours mostly share a locality: its label is looked up again only when it changes.
  let last: Locality | undefined;
  let group: Endpoint[] = [];
  for (const e of endpoints) {
    const l = e.locality;
    if (last === undefined || !sameLocality(l, last)) {
      const label = localityLabel(l);
      const found = byLocality.get(label);
      if (found) group = found;
      else {
        group = [];
        byLocality.set(label, group);
      }
      last = l;
    }
    group.push(e);
  }
  const labels = [...byLocality.keys()].sort(compareStrings);
  return message(ClusterLoadAssignmentSchema, {
    clusterName: name,
    endpoints: labels.map((label) => localityEndpoints(byLocality.get(label) ?? [], withNetwork)),
  });
}

function sameLocality(a: Locality, b: Locality): boolean {
  return a === b || (a.region === b.region && a.zone === b.zone && a.subzone === b.subzone);
}

function localityEndpoints(group: Endpoint[], withNetwork: boolean): LocalityLbEndpoints {
  const { region, zone, subzone } = group[0]?.locality ?? { region: "", zone: "", subzone: "" };
  return message(LocalityLbEndpointsSchema, {
    locality: message(LocalitySchema, { region, zone, subZone: subzone }),
    lbEndpoints: group.map((e) => lbEndpoint(e, withNetwork)),
    loadBalancingWeight: group.length,
  });
}

/** One endpoint, built field by field (blank): it runs once per endpoint of every assignment. */
/** model.TLSModeLabelName: `istio` on a pod whose sidecar accepts Istio mutual TLS. */
export const TLS_MODE_LABEL = "security.istio.io/tlsMode";

/**
 * AppendLbEndpointMetadata: `envoy.transport_socket_match` {tlsMode}, what a sidecar's auto-mTLS
 * transport_socket_matches select the ISTIO_MUTUAL socket by (proxyless clients ignore it), and
 * `istio` {network}, what split-horizon EDS splits by; in that order, so equal endpoints encode alike.
 */
function endpointMetadata(tlsMode: string | undefined, network: string | undefined) {
  const filterMetadata: Record<string, Record<string, string>> = {};
  if (tlsMode) filterMetadata["envoy.transport_socket_match"] = { tlsMode };
  if (network) filterMetadata.istio = { network };
  return message(MetadataSchema, { filterMetadata });
}

function lbEndpoint(e: Endpoint, withNetwork: boolean): LbEndpoint {
  const socket = blank(SocketAddressSchema);
  socket.address = e.address;
  socket.portSpecifier = { case: "portValue", value: e.port };
  const address = blank(AddressSchema);
  address.address = { case: "socketAddress", value: socket };
  const endpoint = blank(EndpointSchema);
  endpoint.address = address;
  const out = blank(LbEndpointSchema);
  out.hostIdentifier = { case: "endpoint", value: endpoint };
  out.healthStatus = healthMap[e.health] ?? HealthStatus.UNKNOWN;
  out.loadBalancingWeight = 1;
  const tlsMode = e.labels[TLS_MODE_LABEL];
  const socketMatch = tlsMode && tlsMode !== "disabled" ? tlsMode : undefined;
  const network = withNetwork ? e.network : undefined;
  if (socketMatch || network) out.metadata = endpointMetadata(socketMatch, network);
  return out;
}
