/**
 * The inbound side of a sidecar whose Sidecar has ingress listeners, as istiod builds it
 * (pilot/pkg/networking/core cluster.go buildInboundClustersFromSidecar, findOrCreateService;
 * cluster_builder.go buildInboundCluster, buildInboundLocalityLbEndpoints; listener_inbound.go
 * buildInboundChainConfigs, getBindToPort): one `inbound|<port>||` cluster per listener, to its
 * defaultEndpoint (STATIC) or, without one, to the original destination (ORIGINAL_DST), and one
 * chain config per port, ascending. The service instances are not used for ports then (Istio's
 * ENABLE_SIDECAR_SERVICE_INBOUND_LISTENER_MERGE is off by default), only to name the service a
 * listener port serves (telemetry metadata, the inbound DestinationRule).
 */
import { create } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import {
  type Cluster,
  Cluster_DiscoveryType,
  ClusterSchema,
} from "../../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import {
  AddressSchema,
  BindConfigSchema,
  PipeSchema,
  SocketAddressSchema,
} from "../../../gen/envoy/config/core/v3/address_pb.ts";
import {
  EndpointSchema,
  LbEndpointSchema,
  LocalityLbEndpointsSchema,
} from "../../../gen/envoy/config/endpoint/v3/endpoint_components_pb.ts";
import { ClusterLoadAssignmentSchema } from "../../../gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import type { Protocol, Service } from "../../../model/index.ts";
import type { SidecarIngress } from "../../../registry/istio/sidecar.ts";
import { portLevelPolicy } from "../../../registry/istio/traffic-policy.ts";
import { parseProtocol } from "../../../registry/kube/protocol.ts";
import type { Generated } from "../../types.ts";
import { message } from "../shared.ts";
import { applyTrafficPolicy, type BuildContext, draftCluster, finishCluster } from "./cluster-build.ts";
import { inboundClusterName } from "./cluster-common.ts";
import type { SidecarIngressScope, SidecarInputs } from "./types.ts";

/** InboundPassthroughBindIpv4/Ipv6 (cluster-inbound.ts uses the same). */
const BIND_V4 = "127.0.0.6";
const BIND_V6 = "::6";
const NEVER_SECONDS = 9_223_372_035n;
const UNIX = "unix://";

/**
 * Where a listener's cluster sends traffic (buildInboundClustersFromSidecar): a unix socket as
 * written; `0.0.0.0` the proxy's first IPv4 (else 127.0.0.1), `::` its first IPv6 (else ::1);
 * `127.0.0.1` / `::1` that loopback, the other family's when the proxy lacks it; none ("" host or
 * no defaultEndpoint): the original destination (address "").
 */
export function ingressEndpoint(
  defaultEndpoint: string,
  proxyIps: readonly string[],
): { address: string; port: number } {
  if (defaultEndpoint.startsWith(UNIX)) return { address: defaultEndpoint, port: 0 };
  if (defaultEndpoint === "") return { address: "", port: 0 };
  const bracket = defaultEndpoint.startsWith("[");
  const colon = bracket ? defaultEndpoint.indexOf("]:") + 1 : defaultEndpoint.lastIndexOf(":");
  const host = bracket ? defaultEndpoint.slice(1, colon - 1) : defaultEndpoint.slice(0, colon);
  const port = Number(defaultEndpoint.slice(colon + 1));
  const v4 = proxyIps.find((ip) => !ip.includes(":"));
  const v6 = proxyIps.find((ip) => ip.includes(":"));
  // getWildcardsAndLocalHost: the proxy's loopbacks by IP family (IPv4 unless IPv6-only).
  const loopV4 = v4 !== undefined || v6 === undefined;
  const loopV6 = v6 !== undefined;
  let address = "";
  if (host === "0.0.0.0") address = v4 ?? "127.0.0.1";
  else if (host === "::") address = v6 ?? "::1";
  else if (host === "127.0.0.1") address = loopV4 ? "127.0.0.1" : "::1";
  else if (host === "::1") address = loopV6 ? "::1" : "127.0.0.1";
  return { address, port };
}

/** util.BuildAddress: a pipe for `unix://<path>`, else a socket address. */
function address(addr: string, port: number) {
  if (addr.startsWith(UNIX))
    return message(AddressSchema, {
      address: { case: "pipe", value: message(PipeSchema, { path: addr.slice(UNIX.length) }) },
    });
  return message(AddressSchema, {
    address: {
      case: "socketAddress",
      value: message(SocketAddressSchema, {
        address: addr,
        portSpecifier: { case: "portValue", value: port },
      }),
    },
  });
}

/** findOrCreateService: the service of an instance on the listener's port, else one named after the Sidecar. */
function serviceFor(inputs: SidecarInputs, scope: SidecarIngressScope, port: number): Service {
  const found = inputs.instances.find((i) => i.targetPort === port);
  if (found) return found.service;
  return {
    hostname: `${scope.name}.${scope.namespace}`,
    name: scope.name,
    namespace: scope.namespace,
    meshExternal: true,
  } as Service;
}

/** buildInboundClustersFromSidecar: one `inbound|<port>||` cluster per ingress listener, in order. */
export function ingressClusters(
  inputs: SidecarInputs,
  scope: SidecarIngressScope,
  ctx: BuildContext,
): Generated<typeof ClusterSchema>[] {
  const out: Generated<typeof ClusterSchema>[] = [];
  const v4 = inputs.proxy.ipAddresses.some((ip) => !ip.includes(":"));
  for (const l of scope.listeners) {
    const name = inboundClusterName(l.port);
    const protocol: Protocol = parseProtocol(l.protocol);
    const target = ingressEndpoint(l.defaultEndpoint, inputs.proxy.ipAddresses);
    const d = draftCluster(name, Cluster_DiscoveryType.ORIGINAL_DST, protocol, [], ctx);
    if (!d) continue;
    if (target.address !== "") {
      d.fields.clusterDiscoveryType = { case: "type", value: Cluster_DiscoveryType.STATIC };
      d.fields.loadAssignment = message(ClusterLoadAssignmentSchema, {
        clusterName: name,
        endpoints: [
          message(LocalityLbEndpointsSchema, {
            lbEndpoints: [
              message(LbEndpointSchema, {
                hostIdentifier: {
                  case: "endpoint",
                  value: message(EndpointSchema, { address: address(target.address, target.port) }),
                },
              }),
            ],
          }),
        ],
      });
    } else d.fields.cleanupInterval = create(DurationSchema, { seconds: NEVER_SECONDS });
    const service = serviceFor(inputs, scope, l.port);
    const dr = inputs.services.find((v) => v.hostname === service.hostname)?.destinationRule;
    const policy = dr?.trafficPolicy ? portLevelPolicy(dr.trafficPolicy, l.port).policy : undefined;
    applyTrafficPolicy(d, policy, protocol, ctx, undefined);
    // Not to a loopback: bound to 127.0.0.6 (::6) so iptables does not capture it again.
    if (target.address !== "127.0.0.1" && target.address !== "::1")
      d.fields.upstreamBindConfig = create(BindConfigSchema, {
        sourceAddress: message(SocketAddressSchema, {
          address: v4 ? BIND_V4 : BIND_V6,
          portSpecifier: { case: "portValue", value: 0 },
        }),
      });
    const rule = dr?.trafficPolicy ? { name: dr.name, namespace: dr.namespace } : undefined;
    const cluster: Cluster = finishCluster(d, {
      ...(!service.meshExternal && { services: [service] }),
      ...(rule && { rule }),
    });
    out.push({ name, schema: ClusterSchema, message: cluster });
  }
  return out;
}

/** One inbound chain (or bound listener) of a Sidecar ingress listener. */
export interface IngressChain {
  listener: SidecarIngress;
  protocol: Protocol;
  /** The bind address (the listener's, else 0.0.0.0): chain and listener names are `<bind>_<port>`. */
  bind: string;
  /** getBindToPort: captureMode NONE, or DEFAULT under INTERCEPTION_MODE NONE: a listener of its own. */
  bindToPort: boolean;
  /** The trace operation: `<sidecar>.<namespace>:<port>/*` (its synthetic telemetry hostname). */
  operation: string;
}

/** buildInboundChainConfigs with a Sidecar's ingress listeners: one per port, ascending. */
export function ingressChains(inputs: SidecarInputs, scope: SidecarIngressScope): IngressChain[] {
  const none = inputs.proxy.metadata.interceptionMode === "NONE";
  const seen = new Set<number>();
  const out: IngressChain[] = [];
  for (const l of [...scope.listeners].sort((a, b) => a.port - b.port)) {
    if (seen.has(l.port)) continue;
    seen.add(l.port);
    out.push({
      listener: l,
      protocol: parseProtocol(l.protocol),
      bind: l.bind === "" ? "0.0.0.0" : l.bind,
      bindToPort: l.captureMode === "NONE" || (l.captureMode === "DEFAULT" && none),
      operation: `${scope.name}.${scope.namespace}:${l.port}/*`,
    });
  }
  return out;
}
