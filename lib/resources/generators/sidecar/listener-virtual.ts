/**
 * The two capture listeners of a sidecar redirected by iptables, as istiod builds them
 * (pilot/pkg/networking/core/listener_builder.go buildVirtualOutboundListener,
 * buildOutboundCatchAllNetworkFilterChains, blackholeFilterChain; listener_inbound.go
 * inboundVirtualListener, buildInboundPassthroughChains, inboundCustomListener; plugin/authn
 * ForPassthrough; model constants VirtualOutboundListenerName, VirtualInboundListenerName, the chain
 * names). Inbound chains follow the proxy's effective PeerAuthentication per port (inbound-chains.ts,
 * inbound-tls.ts) and carry its RBAC filters.
 */
import { AddressSchema, SocketAddressSchema } from "../../../gen/envoy/config/core/v3/address_pb.ts";
import { MetadataSchema, TrafficDirection } from "../../../gen/envoy/config/core/v3/base_pb.ts";
import type { FilterChain } from "../../../gen/envoy/config/listener/v3/listener_components_pb.ts";
import { type Listener, ListenerSchema } from "../../../gen/envoy/config/listener/v3/listener_pb.ts";
import { durationOf } from "../cluster-policy.ts";
import { message } from "../shared.ts";
import { BLACK_HOLE_CLUSTER, INBOUND_PASSTHROUGH_CLUSTER } from "./cluster.ts";
import { inboundClusterName } from "./cluster-common.ts";
import {
  type InboundChainConfig,
  type InboundChainContext,
  inboundChains,
  inboundListenerFilters,
  VIRTUAL_INBOUND,
} from "./inbound-chains.ts";
import { ingressChains } from "./inbound-ingress.ts";
import { inboundMtls, inboundTlsSockets, modeForPort } from "./inbound-tls.ts";
import { catchAllCluster, filterChain, tcpProxyFilter } from "./listener-filters.ts";
import { WILDCARD } from "./listener-outbound.ts";
import { portKind } from "./outbound-ports.ts";
import type { ServiceInstance, SidecarIngressScope, SidecarInputs } from "./types.ts";

/** model.VirtualOutboundListenerName. */
export const VIRTUAL_OUTBOUND = "virtualOutbound";
export { VIRTUAL_INBOUND } from "./inbound-chains.ts";
/** MeshConfig.proxyListenPort: where iptables redirects outbound traffic. */
export const PROXY_LISTEN_PORT = 15001;
/** MeshConfig.proxyInboundListenPort: where iptables redirects inbound traffic. */
export const PROXY_INBOUND_LISTEN_PORT = 15006;

const zero = durationOf(0);

/** Under INTERCEPTION_MODE TPROXY both capture listeners are transparent (istiod sets it then only). */
function transparent(inputs: SidecarInputs): { transparent?: boolean } {
  return inputs.proxy.metadata.interceptionMode === "TPROXY" ? { transparent: true } : {};
}

function wildcardAddress(port: number) {
  return message(AddressSchema, {
    address: {
      case: "socketAddress",
      value: message(SocketAddressSchema, {
        address: WILDCARD,
        portSpecifier: { case: "portValue", value: port },
      }),
    },
  });
}

/**
 * virtualOutbound: 0.0.0.0:15001, use_original_dst (each connection goes to the listener of its
 * original destination), and for what no listener takes: `virtualOutbound-blackhole` (a connection
 * to 15001 itself ▶ BlackHoleCluster, so nothing loops) then `virtualOutbound-catchall-tcp`
 * (PassthroughCluster under ALLOW_ANY, else BlackHoleCluster).
 */
export function virtualOutboundListener(inputs: SidecarInputs): Listener {
  return message(ListenerSchema, {
    name: VIRTUAL_OUTBOUND,
    address: wildcardAddress(PROXY_LISTEN_PORT),
    useOriginalDst: true,
    ...transparent(inputs),
    trafficDirection: TrafficDirection.OUTBOUND,
    filterChains: [
      filterChain([tcpProxyFilter(BLACK_HOLE_CLUSTER)], {
        name: `${VIRTUAL_OUTBOUND}-blackhole`,
        match: { destinationPort: PROXY_LISTEN_PORT },
      }),
      filterChain([tcpProxyFilter(catchAllCluster(inputs.mesh.outboundTrafficPolicy))], {
        name: `${VIRTUAL_OUTBOUND}-catchall-tcp`,
      }),
    ],
  });
}

/**
 * virtualInbound: 0.0.0.0:15006. Chains: `virtualInbound-blackhole` (port 15006 itself), the
 * passthrough chains to InboundPassthroughCluster (`virtualInbound-catchall-http` by ALPN,
 * `virtualInbound` for the rest) under the workload's mode, one passthrough set per port a
 * workload PeerAuthentication names that no service port (or Sidecar ingress port) declares, then
 * per target port of the proxy's service instances (first instance of a port wins, ports ascending)
 * chains `0.0.0.0_<port>` to `inbound|<port>||` under that port's mode (with a Sidecar's ingress
 * listeners, theirs instead: `<bind>_<port>`, metadata naming the Sidecar): HTTP ▶
 * HttpConnectionManager with an inline route; TCP ▶ tcp_proxy; unknown ▶ both, HTTP by ALPN.
 * Listener filters: original_dst, then the TLS and HTTP inspectors where chains need them.
 */
export function virtualInboundListener(inputs: SidecarInputs): Listener {
  const ctx = chainContext(inputs);
  const mtls = inboundMtls(inputs);
  const passthrough = (port: number): InboundChainConfig => ({
    cluster: INBOUND_PASSTHROUGH_CLUSTER,
    port,
    passthrough: true,
    kind: "sniffed",
    operation: ":0/*",
    bind: WILDCARD,
  });
  const chains: FilterChain[] = [
    filterChain([tcpProxyFilter(BLACK_HOLE_CLUSTER)], {
      name: `${VIRTUAL_INBOUND}-blackhole`,
      match: { destinationPort: PROXY_INBOUND_LISTEN_PORT },
    }),
    ...inboundChains(passthrough(0), mtls.mode, ctx),
  ];
  // needPerPortPassthroughFilterChain: ports the Sidecar's ingress (else the instances) declare.
  const declared = new Set(
    inputs.ingress ? inputs.ingress.listeners.map((l) => l.port) : inputs.instances.map((i) => i.targetPort),
  );
  const perPort = Object.keys(mtls.perPort ?? {})
    .map(Number)
    .filter((p) => !declared.has(p))
    .sort((a, b) => a - b);
  for (const port of perPort) chains.push(...inboundChains(passthrough(port), modeForPort(mtls, port), ctx));
  if (inputs.ingress) {
    const metadata = sidecarMetadata(inputs.ingress);
    for (const c of ingressChains(inputs, inputs.ingress)) {
      const kind = portKind(c.protocol);
      if (!kind || c.bindToPort) continue;
      const port = c.listener.port;
      const cc = {
        cluster: inboundClusterName(port),
        port,
        passthrough: false,
        kind,
        operation: c.operation,
      };
      chains.push(...inboundChains({ ...cc, bind: c.bind, metadata }, modeForPort(mtls, port), ctx));
    }
  } else
    for (const inst of inboundInstances(inputs)) {
      const kind = portKind(inst.servicePort.protocol);
      if (!kind) continue;
      const port = inst.targetPort;
      const operation = `${inst.service.hostname}:${inst.servicePort.port}/*`;
      const cc = { cluster: inboundClusterName(port), port, passthrough: false, kind, operation };
      chains.push(...inboundChains({ ...cc, bind: WILDCARD }, modeForPort(mtls, port), ctx));
    }
  return message(ListenerSchema, {
    name: VIRTUAL_INBOUND,
    address: wildcardAddress(PROXY_INBOUND_LISTEN_PORT),
    ...transparent(inputs),
    trafficDirection: TrafficDirection.INBOUND,
    continueOnListenerFiltersTimeout: true,
    listenerFilters: inboundListenerFilters(chains, false),
    listenerFiltersTimeout: zero,
    filterChains: chains,
  });
}

/** The TLS sockets of the proxy's mesh and its RBAC filters, shared by all its inbound chains. */
function chainContext(inputs: SidecarInputs): InboundChainContext {
  return { sockets: inboundTlsSockets(inputs.mesh), ...(inputs.authz && { authz: inputs.authz }) };
}

/** The proxy's service instances, one per target port (the first in hostname order), ascending. */
export function inboundInstances(inputs: SidecarInputs): ServiceInstance[] {
  const byPort = new Map<number, ServiceInstance>();
  const sorted = [...inputs.instances].sort(
    (a, b) =>
      a.targetPort - b.targetPort ||
      (a.service.hostname < b.service.hostname ? -1 : a.service.hostname > b.service.hostname ? 1 : 0),
  );
  for (const inst of sorted) if (!byPort.has(inst.targetPort)) byPort.set(inst.targetPort, inst);
  return [...byPort.values()];
}

/** BuildConfigInfoMetadata of a Sidecar: `istio.config` `/apis/networking.istio.io/v1alpha3/namespaces/<ns>/sidecar/<name>`. */
function sidecarMetadata(scope: SidecarIngressScope): FilterChain["metadata"] {
  const config = `/apis/networking.istio.io/v1alpha3/namespaces/${scope.namespace}/sidecar/${scope.name}`;
  return message(MetadataSchema, { filterMetadata: { istio: { config } } });
}

/**
 * inboundCustomListener: a listener of its own, bound to `<bind>:<port>` and named `<bind>_<port>`,
 * for each Sidecar ingress listener that binds to its port (captureMode NONE, or DEFAULT under
 * INTERCEPTION_MODE NONE); no original_dst filter (nothing redirected it), the inspectors its
 * chains need.
 */
export function boundInboundListeners(inputs: SidecarInputs): Listener[] {
  if (!inputs.ingress) return [];
  const metadata = sidecarMetadata(inputs.ingress);
  const ctx = chainContext(inputs);
  const mtls = inboundMtls(inputs);
  const out: Listener[] = [];
  for (const c of ingressChains(inputs, inputs.ingress)) {
    const kind = portKind(c.protocol);
    if (!kind || !c.bindToPort) continue;
    const port = c.listener.port;
    const cc = { cluster: inboundClusterName(port), port, passthrough: false, kind, operation: c.operation };
    const chains = inboundChains({ ...cc, bind: c.bind, metadata }, modeForPort(mtls, port), ctx);
    out.push(
      message(ListenerSchema, {
        name: `${c.bind}_${port}`,
        address: message(AddressSchema, {
          address: {
            case: "socketAddress",
            value: message(SocketAddressSchema, {
              address: c.bind,
              portSpecifier: { case: "portValue", value: port },
            }),
          },
        }),
        trafficDirection: TrafficDirection.INBOUND,
        continueOnListenerFiltersTimeout: true,
        listenerFilters: inboundListenerFilters(chains, true),
        listenerFiltersTimeout: zero,
        filterChains: chains,
      }),
    );
  }
  return out;
}
