/** Reading generated sidecar Clusters in tests: a compact summary of the fields the goldens pin, and the PGV check. */
import { toBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import {
  type Cluster,
  Cluster_DiscoveryType,
  Cluster_LbPolicy,
  ClusterSchema,
} from "../../../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import { UpstreamTlsContextSchema } from "../../../../lib/gen/envoy/extensions/transport_sockets/tls/v3/tls_pb.ts";
import { HttpProtocolOptionsSchema } from "../../../../lib/gen/envoy/extensions/upstreams/http/v3/http_protocol_options_pb.ts";
import { HTTP_PROTOCOL_OPTIONS_KEY } from "../../../../lib/resources/generators/sidecar/cluster-common.ts";
import type { Generated } from "../../../../lib/resources/types.ts";
import { TypeUrl } from "../../../../lib/resources/xds-types.ts";
import { resourceViolations } from "../../../support/xds-check.ts";

/** Throws when any cluster, encoded as sent, breaks a PGV rule (Any contents included). */
export function assertClustersValid(clusters: readonly Generated<typeof ClusterSchema>[]): void {
  const bad = clusters.flatMap((c) =>
    resourceViolations(TypeUrl.cluster, toBinary(ClusterSchema, c.message), c.name),
  );
  if (bad.length > 0) throw new Error(`clusters Envoy would NACK:\n${bad.join("\n")}`);
}

export const typeName = (c: Cluster) =>
  c.clusterDiscoveryType.case === "type" ? Cluster_DiscoveryType[c.clusterDiscoveryType.value] : "?";
export const lbName = (c: Cluster) => Cluster_LbPolicy[c.lbPolicy];

/** The cluster's HttpProtocolOptions, unpacked, or undefined. */
export function httpOptions(c: Cluster) {
  const any = c.typedExtensionProtocolOptions[HTTP_PROTOCOL_OPTIONS_KEY];
  return any ? anyUnpack(any, HttpProtocolOptionsSchema) : undefined;
}

/** `h2` | `downstream` | `h1` | undefined: which upstream protocol the options choose. */
export function upstream(c: Cluster): string | undefined {
  const o = httpOptions(c)?.upstreamProtocolOptions;
  if (!o?.case) return undefined;
  if (o.case === "useDownstreamProtocolConfig") return "downstream";
  if (o.case === "explicitHttpConfig")
    return o.value.protocolConfig.case === "http2ProtocolOptions" ? "h2" : "h1";
  return o.case;
}

/** The UpstreamTlsContext of the transport socket, or of the named transport socket match. */
export function tlsContext(c: Cluster, match?: string) {
  const socket = match
    ? c.transportSocketMatches.find((m) => m.name === match)?.transportSocket
    : c.transportSocket;
  const any = socket?.configType.case === "typedConfig" ? socket.configType.value : undefined;
  return any?.typeUrl.endsWith("UpstreamTlsContext") ? anyUnpack(any, UpstreamTlsContextSchema) : undefined;
}

/** The `istio` filter metadata as JSON. */
export const istioMeta = (c: Cluster) => c.metadata?.filterMetadata.istio;

/** A by-name lookup that fails the test when the cluster is missing. */
export function byName(clusters: readonly Generated<typeof ClusterSchema>[], name: string): Cluster {
  const c = clusters.find((g) => g.name === name);
  if (!c) throw new Error(`no cluster ${name}; have ${clusters.map((g) => g.name).join(", ")}`);
  return c.message;
}
