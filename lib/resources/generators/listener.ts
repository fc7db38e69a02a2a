/** LDS for proxyless gRPC: one API listener per service port, as Istio's grpcgen buildOutboundListeners. */
import { create, toBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { type Any, AnySchema, anyPack } from "@bufbuild/protobuf/wkt";
import { AddressSchema, SocketAddressSchema } from "../../gen/envoy/config/core/v3/address_pb.ts";
import { ApiListenerSchema } from "../../gen/envoy/config/listener/v3/api_listener_pb.ts";
import { type Listener, ListenerSchema } from "../../gen/envoy/config/listener/v3/listener_pb.ts";
import { RouterSchema } from "../../gen/envoy/extensions/filters/http/router/v3/router_pb.ts";
import {
  HttpConnectionManagerSchema,
  type HttpFilter,
  HttpFilterSchema,
  RdsSchema,
} from "../../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import type { Generated, Generator, ServiceView } from "../types.ts";
import { TypeUrl } from "../xds-types.ts";
import { emptyFaultConfig, FAULT_FILTER_NAME } from "./route-fault.ts";
import { routesUseFault, virtualServiceRoutes } from "./route-vs.ts";
import { adsConfigSource, deepFreeze, listenerName, mergedPorts, message, sortedServices } from "./shared.ts";

/** The router filter's name; grpc-js-xds requires the router, and only the router, last. */
export const ROUTER_FILTER_NAME = "envoy.filters.http.router";

/**
 * One Listener `<host>:<port>` per merged service port, ascending by port. Its api_listener is an
 * HttpConnectionManager that takes RouteConfiguration `<host>:<port>` over ADS (v3) and runs the
 * router filter last, so grpc-js-xds accepts it (no listener_filters, no use_original_dst). When a
 * route of that RouteConfiguration injects faults, the fault filter (empty config) runs before the
 * router, since gRPC applies a route's fault override only for a filter the listener has. istiod's
 * grpcgen always lists it; an empty fault filter injects nothing, so leaving it out elsewhere keeps
 * every listener without faults exactly as before.
 */
export const listenerGenerator: Generator = {
  typeUrl: TypeUrl.listener,
  generate(view) {
    const address = serviceAddress(view);
    return mergedPorts(view).map((p): Generated<typeof ListenerSchema> => {
      const name = listenerName(view.hostname, p.port);
      const filters = routesUseFault(virtualServiceRoutes(view, p.port)) ? faultAndRouter : routerOnly;
      return { name, schema: ListenerSchema, message: apiListener(name, address, p.port, filters) };
    });
  },
};

/** The router filter, the same in every listener: built once, shared, frozen. */
const routerFilter = deepFreeze(
  message(HttpFilterSchema, {
    name: ROUTER_FILTER_NAME,
    configType: { case: "typedConfig", value: anyPack(RouterSchema, create(RouterSchema)) },
  }),
);

/** The fault filter with an empty config (routes override it), as Istio's grpcgen runs it. */
const faultFilter = deepFreeze(
  message(HttpFilterSchema, {
    name: FAULT_FILTER_NAME,
    configType: { case: "typedConfig", value: emptyFaultConfig },
  }),
);
const routerOnly: readonly HttpFilter[] = Object.freeze([routerFilter]);
const faultAndRouter: readonly HttpFilter[] = Object.freeze([faultFilter, routerFilter]);

function apiListener(name: string, address: string, port: number, filters: readonly HttpFilter[]): Listener {
  return message(ListenerSchema, {
    name,
    address: message(AddressSchema, {
      address: {
        case: "socketAddress",
        value: message(SocketAddressSchema, { address, portSpecifier: { case: "portValue", value: port } }),
      },
    }),
    apiListener: message(ApiListenerSchema, { apiListener: connectionManager(name, filters) }),
  });
}

const hcmTypeUrl = anyPack(HttpConnectionManagerSchema, create(HttpConnectionManagerSchema)).typeUrl;
const rdsField = HttpConnectionManagerSchema.field.rds;
const statPrefixField = HttpConnectionManagerSchema.field.statPrefix;
const routeConfigNameField = RdsSchema.field.routeConfigName;
/** Per shared filter list (routerOnly, faultAndRouter): its http_filters field, encoded once. */
const filtersBytes = new WeakMap<readonly HttpFilter[], Uint8Array>();
/** The Rds message's config_source field (ADS), the same in every listener: encoded once. */
const adsSourceBytes = toBinary(RdsSchema, message(RdsSchema, { configSource: adsConfigSource() }));

/**
 * The api_listener: an Any of the HttpConnectionManager { stat_prefix: `routeConfigName`,
 * rds: { config_source: ADS, route_config_name: `routeConfigName` }, http_filters: `filters` },
 * its bytes composed as lib/xds/response-bytes.ts composes responses (protobuf's merge by
 * concatenation), in one writer: stat_prefix, then the `rds` field (its config_source field,
 * encoded once, then route_config_name), then the http_filters field, encoded once per shared
 * filter list. Equal byte for byte to anyPack of the whole message (see the listener tests):
 * protobuf-es writes fields in field-number order, stat_prefix (2), rds (3), http_filters (5) and
 * in Rds config_source (1), route_config_name (2), and nothing else is set. stat_prefix is required
 * by Envoy's PGV rules (min_len 1); gRPC ignores it. It spares toBinary's walk over the manager's
 * 40-odd unset fields, and an encoding of the Rds message on its own, once per listener.
 */
export function connectionManager(routeConfigName: string, filters: readonly HttpFilter[]): Any {
  let tail = filtersBytes.get(filters);
  if (tail === undefined) {
    tail = toBinary(
      HttpConnectionManagerSchema,
      message(HttpConnectionManagerSchema, { httpFilters: [...filters] }),
    );
    filtersBytes.set(filters, tail);
  }
  const w = new BinaryWriter();
  // proto3 leaves an empty string out, as toBinary does (a listener name is never empty).
  if (routeConfigName !== "") w.tag(statPrefixField.number, WireType.LengthDelimited).string(routeConfigName);
  w.tag(rdsField.number, WireType.LengthDelimited).fork().raw(adsSourceBytes);
  if (routeConfigName !== "")
    w.tag(routeConfigNameField.number, WireType.LengthDelimited).string(routeConfigName);
  const value = w.join().raw(tail).finish();
  return message(AnySchema, { typeUrl: hcmTypeUrl, value });
}

/** The first ClusterIP of the first cluster (clusterId order) that has one, else 0.0.0.0 (as Istio). */
function serviceAddress(view: ServiceView): string {
  for (const svc of sortedServices(view)) {
    const first = [...svc.addresses].sort()[0];
    if (first) return first;
  }
  return "0.0.0.0";
}
