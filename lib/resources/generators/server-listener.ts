/**
 * Server Listeners for xDS-enabled gRPC servers (gRFC A36), as Istio's grpcgen buildInboundListeners:
 * an XdsServer bound to `<ip>:<port>` asks for `xds.istio.io/grpc/lds/inbound/<ip>:<port>` and gets
 * one filter chain — mTLS or plaintext by the workload's PeerAuthentication on that port — whose
 * HttpConnectionManager routes everything to the server itself and runs the workload's RBAC filters
 * before the router. Pure: the proxy's parts and the policies' verdicts in, a Listener out.
 */
import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { AddressSchema, SocketAddressSchema } from "../../gen/envoy/config/core/v3/address_pb.ts";
import {
  FilterChainSchema,
  FilterSchema,
} from "../../gen/envoy/config/listener/v3/listener_components_pb.ts";
import { type Listener, ListenerSchema } from "../../gen/envoy/config/listener/v3/listener_pb.ts";
import {
  NonForwardingActionSchema,
  RouteMatchSchema,
  RouteSchema,
  VirtualHostSchema,
} from "../../gen/envoy/config/route/v3/route_components_pb.ts";
import { RouteConfigurationSchema } from "../../gen/envoy/config/route/v3/route_pb.ts";
import { RouterSchema } from "../../gen/envoy/extensions/filters/http/router/v3/router_pb.ts";
import {
  HttpConnectionManagerSchema,
  type HttpFilter,
  HttpFilterSchema,
} from "../../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import { parseIp } from "../../model/ip.ts";
import type { MtlsMode } from "../../registry/istio/security.ts";
import { downstreamTlsSocket } from "./grpc-tls.ts";
import { ROUTER_FILTER_NAME } from "./listener.ts";

/** The name prefix of gRPC server listeners (istio-agent grpcxds.ServerListenerNamePrefix). */
export const SERVER_LISTENER_PREFIX = "xds.istio.io/grpc/lds/inbound/";

/** The label a sidecar-injected (or agent-run) workload carries: its clients use mTLS (auto-mTLS). */
export const TLS_MODE_LABEL = "security.istio.io/tlsMode";

/** A server listener name split: the address the server bound and its port. */
export interface ServerListenerAddress {
  host: string;
  port: number;
}

/**
 * `xds.istio.io/grpc/lds/inbound/<ip>:<port>` (IPv6 in brackets) as net.SplitHostPort reads it;
 * undefined for another name or a malformed one (istiod logs and skips it). The host must be an IP:
 * gRPC servers bind addresses, never hostnames.
 */
export function parseServerListenerName(name: string): ServerListenerAddress | undefined {
  if (!name.startsWith(SERVER_LISTENER_PREFIX)) return undefined;
  const rest = name.slice(SERVER_LISTENER_PREFIX.length);
  const colon = rest.lastIndexOf(":");
  if (colon < 0) return undefined;
  let host = rest.slice(0, colon);
  const portText = rest.slice(colon + 1);
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  else if (host.includes(":")) return undefined;
  if (!/^[0-9]{1,5}$/.test(portText)) return undefined;
  const port = Number(portText);
  if (port < 1 || port > 65535 || !parseIp(host).ok) return undefined;
  return { host, port };
}

/** Whether `host` is a wildcard bind address (every interface of the workload). */
export function isWildcardAddress(host: string): boolean {
  return host === "0.0.0.0" || host === "::";
}

/**
 * buildInboundFilterChains' mode: a workload labelled `security.istio.io/tlsMode: istio` has clients
 * that use mTLS, so PERMISSIVE is served as STRICT; else PERMISSIVE is plaintext (a gRPC server
 * cannot match on the transport protocol, gRFC A36), as DISABLE is.
 */
export function serverTlsMode(
  mode: Exclude<MtlsMode, "UNSET">,
  labels: Readonly<Record<string, string>>,
): "STRICT" | "DISABLE" {
  if (mode === "STRICT") return "STRICT";
  if (mode === "PERMISSIVE" && labels[TLS_MODE_LABEL] === "istio") return "STRICT";
  return "DISABLE";
}

/** What one server listener is made of. */
export interface ServerListenerInputs {
  name: string;
  address: ServerListenerAddress;
  /** The port's mode after serverTlsMode. */
  mode: "STRICT" | "DISABLE";
  /** The workload's RBAC filters (DENY, then ALLOW), run before the router. */
  httpFilters: readonly HttpFilter[];
}

/** The router filter, last in every server chain (gRPC requires it there). */
const routerFilter = create(HttpFilterSchema, {
  name: ROUTER_FILTER_NAME,
  configType: { case: "typedConfig", value: anyPack(RouterSchema, create(RouterSchema)) },
});

/**
 * The Listener: its address the name's, one filter chain `inbound-mtls` (a DownstreamTlsContext that
 * requires a client certificate) or `inbound-plaintext`, no filter_chain_match, no listener filters.
 * The chain's HttpConnectionManager carries its route inline (`inbound`: every path to a
 * non-forwarding action, the server's own handlers); the virtual host and stat prefix are named
 * `inbound` so the listener also passes Envoy's validation rules, which istiod's leaves unnamed.
 */
export function serverListener(inputs: ServerListenerInputs): Listener {
  const suffix = inputs.mode === "STRICT" ? "mtls" : "plaintext";
  const routeConfig = create(RouteConfigurationSchema, {
    name: "inbound",
    virtualHosts: [
      create(VirtualHostSchema, {
        name: "inbound",
        domains: ["*"],
        routes: [
          create(RouteSchema, {
            match: create(RouteMatchSchema, { pathSpecifier: { case: "prefix", value: "/" } }),
            action: { case: "nonForwardingAction", value: create(NonForwardingActionSchema) },
          }),
        ],
      }),
    ],
  });
  const hcm = create(HttpConnectionManagerSchema, {
    statPrefix: "inbound",
    routeSpecifier: { case: "routeConfig", value: routeConfig },
    httpFilters: [...inputs.httpFilters, routerFilter],
  });
  return create(ListenerSchema, {
    name: inputs.name,
    address: create(AddressSchema, {
      address: {
        case: "socketAddress",
        value: create(SocketAddressSchema, {
          address: inputs.address.host,
          portSpecifier: { case: "portValue", value: inputs.address.port },
        }),
      },
    }),
    filterChains: [
      create(FilterChainSchema, {
        name: `inbound-${suffix}`,
        filters: [
          create(FilterSchema, {
            name: `inbound-hcm${suffix}`,
            configType: { case: "typedConfig", value: anyPack(HttpConnectionManagerSchema, hcm) },
          }),
        ],
        ...(inputs.mode === "STRICT" && { transportSocket: downstreamTlsSocket() }),
      }),
    ],
  });
}
