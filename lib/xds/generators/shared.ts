/** Helpers every proxyless gRPC generator shares: resource names, merged ports, ADS config sources. */
import { create } from "@bufbuild/protobuf";
import {
  AggregatedConfigSourceSchema,
  ApiVersion,
  type ConfigSource,
  ConfigSourceSchema,
} from "../../gen/envoy/config/core/v3/config_source_pb.ts";
import type { Service, ServicePort } from "../../model/index.ts";
import type { ServiceView } from "../types.ts";

/** Istio's BuildSubsetKey for the default subset: `outbound|<port>||<host>` (Cluster and CLA name). */
export function clusterName(hostname: string, port: number): string {
  return `outbound|${port}||${hostname}`;
}

/** net.JoinHostPort for a hostname: `<host>:<port>` (proxyless gRPC Listener and RouteConfiguration name). */
export function listenerName(hostname: string, port: number): string {
  return `${hostname}:${port}`;
}

/** Plain code-unit comparison: the same order on every runtime and locale (never localeCompare). */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The service's records ordered by clusterId, so "first cluster wins" means the same on every run. */
export function sortedServices(view: ServiceView): Service[] {
  return [...view.services].sort((a, b) => compareStrings(a.clusterId, b.clusterId));
}

/**
 * The union of every cluster's ports, by port number, ascending. On a conflict (one number, two
 * names or protocols) the record of the first cluster in clusterId order wins. Empty when the
 * service has no records, so a deleted service generates nothing.
 */
export function mergedPorts(view: ServiceView): ServicePort[] {
  const byNumber = new Map<number, ServicePort>();
  for (const svc of sortedServices(view)) {
    for (const p of svc.ports) {
      if (!byNumber.has(p.port)) byNumber.set(p.port, { name: p.name, port: p.port, protocol: p.protocol });
    }
  }
  return [...byNumber.values()].sort((a, b) => a.port - b.port);
}

/** A ConfigSource pointing at the ADS stream the resource came on, with the v3 transport (A27). */
export function adsConfigSource(): ConfigSource {
  return create(ConfigSourceSchema, {
    configSourceSpecifier: { case: "ads", value: create(AggregatedConfigSourceSchema) },
    resourceApiVersion: ApiVersion.V3,
  });
}
