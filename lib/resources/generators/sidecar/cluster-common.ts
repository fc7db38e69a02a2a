/**
 * What every sidecar Cluster shares, as istiod's cluster builder writes it
 * (pilot/pkg/networking/core/cluster_builder.go buildCluster, clusterWrapper.build, addTelemetryMetadata;
 * pilot/pkg/networking/util AddConfigInfoMetadata, AddSubsetToMetadata, DelimitedStatsPrefix): names,
 * the `istio` filter metadata, and the upstream HTTP protocol options each cluster collects while it
 * is built and packs once at the end.
 */
import { create, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { anyPack, type Duration } from "@bufbuild/protobuf/wkt";
import type { Cluster } from "../../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import { MetadataSchema } from "../../../gen/envoy/config/core/v3/base_pb.ts";
import {
  HttpProtocolOptionsSchema as CoreHttpProtocolOptionsSchema,
  Http1ProtocolOptionsSchema,
  Http2ProtocolOptionsSchema,
  UpstreamHttpProtocolOptionsSchema,
} from "../../../gen/envoy/config/core/v3/protocol_pb.ts";
import {
  HttpProtocolOptions_ExplicitHttpConfigSchema,
  HttpProtocolOptions_UseDownstreamHttpConfigSchema,
  HttpProtocolOptionsSchema,
} from "../../../gen/envoy/extensions/upstreams/http/v3/http_protocol_options_pb.ts";
import type { Protocol, Service } from "../../../model/index.ts";
import type { DestinationRuleModel } from "../../../registry/istio/destination-rule.ts";
import { durationOf } from "../cluster-policy.ts";
import { message } from "../shared.ts";

/** The typed_extension_protocol_options key Istio writes (v3.HttpProtocolOptionsType). */
export const HTTP_PROTOCOL_OPTIONS_KEY = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions";

/** model.BuildInboundSubsetKey: `inbound|<port>||`. */
export function inboundClusterName(port: number): string {
  return `inbound|${port}||`;
}

/** model.BuildDNSSrvSubsetKey: `outbound_.<port>_.<subset>_.<host>`, the SNI of an ISTIO_MUTUAL cluster. */
export function istioMutualSni(hostname: string, port: number, subset: string): string {
  return `outbound_.${port}_.${subset}_.${hostname}`;
}

/** util.DelimitedStatsPrefix: the alt_stat_name istiod sets on every cluster, `<name>;`. */
export function altStatName(name: string): string {
  return `${name};`;
}

/** protocol.IsHTTP2: GRPC, GRPC-Web and HTTP2 ports get an HTTP/2 upstream. */
export function isHttp2(p: Protocol): boolean {
  return p === "GRPC" || p === "GRPC-Web" || p === "HTTP2";
}

/** protocol.IsHTTP: HTTP, HTTP2, HTTP_PROXY, GRPC, GRPC-Web (what an h2UpgradePolicy may upgrade). */
export function isHttp(p: Protocol): boolean {
  return p === "HTTP" || p === "HTTP_PROXY" || isHttp2(p);
}

/**
 * The upstream HTTP options a cluster collects while it is built (istiod's clusterWrapper
 * httpProtocolOptions): absent until something sets them, packed by `packHttpOptions`.
 */
export interface HttpOptions {
  /** h2: explicit HTTP/2; downstream: use_downstream_protocol_config (h1 + h2); h1 is the default. */
  upstream?: "h2" | "downstream";
  /** max_concurrent_streams of the explicit HTTP/2 options. */
  maxConcurrentStreams?: number;
  idleTimeout?: Duration;
  maxRequestsPerConnection?: number;
  maxConnectionDuration?: Duration;
  autoSni?: true;
  autoSanValidation?: true;
}

/** setUpstreamProtocol: HTTP/2 for an HTTP/2 port, the downstream's protocol for an unnamed (sniffed) port. */
export function upstreamFor(protocol: Protocol): HttpOptions | undefined {
  if (isHttp2(protocol)) return { upstream: "h2" };
  if (protocol === "UnsupportedProtocol") return { upstream: "downstream" };
  return undefined;
}

/**
 * clusterWrapper.build: the options as typed_extension_protocol_options, with explicit HTTP/1.1 when
 * nothing chose the upstream protocol (Envoy requires one).
 */
export function packHttpOptions(o: HttpOptions | undefined): Cluster["typedExtensionProtocolOptions"] {
  if (!o) return {};
  const common =
    o.idleTimeout || o.maxRequestsPerConnection || o.maxConnectionDuration
      ? message(CoreHttpProtocolOptionsSchema, {
          idleTimeout: o.idleTimeout,
          maxRequestsPerConnection: o.maxRequestsPerConnection,
          maxConnectionDuration: o.maxConnectionDuration,
        })
      : undefined;
  const upstreamHttp =
    o.autoSni || o.autoSanValidation
      ? message(UpstreamHttpProtocolOptionsSchema, {
          autoSni: o.autoSni === true,
          autoSanValidation: o.autoSanValidation === true,
        })
      : undefined;
  const options = create(HttpProtocolOptionsSchema, {
    ...(common && { commonHttpProtocolOptions: common }),
    ...(upstreamHttp && { upstreamHttpProtocolOptions: upstreamHttp }),
    upstreamProtocolOptions: upstreamProtocol(o),
  });
  return { [HTTP_PROTOCOL_OPTIONS_KEY]: anyPack(HttpProtocolOptionsSchema, options) };
}

function upstreamProtocol(o: HttpOptions) {
  if (o.upstream === "downstream")
    return {
      case: "useDownstreamProtocolConfig" as const,
      value: create(HttpProtocolOptions_UseDownstreamHttpConfigSchema, {
        httpProtocolOptions: create(Http1ProtocolOptionsSchema),
        http2ProtocolOptions: create(Http2ProtocolOptionsSchema),
      }),
    };
  const protocolConfig =
    o.upstream === "h2"
      ? {
          case: "http2ProtocolOptions" as const,
          value: create(Http2ProtocolOptionsSchema, {
            ...(o.maxConcurrentStreams !== undefined && { maxConcurrentStreams: o.maxConcurrentStreams }),
          }),
        }
      : { case: "httpProtocolOptions" as const, value: create(Http1ProtocolOptionsSchema) };
  return {
    case: "explicitHttpConfig" as const,
    value: create(HttpProtocolOptions_ExplicitHttpConfigSchema, { protocolConfig }),
  };
}

/** passthroughHttpProtocolOptions: 5 minute idle timeout, the downstream's protocol. */
export function passthroughHttpOptions(): HttpOptions {
  return { upstream: "downstream", idleTimeout: durationOf(5 * 60_000) };
}

/** What the `istio` filter metadata of one cluster says. */
export interface IstioMetadata {
  /** The DestinationRule applied (AddConfigInfoMetadata). */
  rule?: Pick<DestinationRuleModel, "name" | "namespace">;
  /** Telemetry services (addTelemetryMetadata): the cluster's service, or the inbound port's services. */
  services?: readonly Service[];
  /**
   * default_original_port: the outbound service port, as addNetworkingMetadata writes it (Istio
   * 1.10 to 1.2x, used by the server side after tunnelling); the newest cluster_builder.go read
   * (istio/istio 00ce34c6) no longer calls it. Kept: the issue names it, and it is inert metadata.
   */
  port?: number;
  subset?: string;
  /** `external: true` for a mesh-external service (ServiceEntry MESH_EXTERNAL). */
  external?: boolean;
  /**
   * util.AddALPNOverrideToMetadata: `alpn_override: "false"` when the DestinationRule's TLS mode is
   * SIMPLE or MUTUAL (the origination keeps the application's ALPN, not Istio's).
   */
  alpnOverride?: boolean;
}

/**
 * The cluster metadata `filter_metadata.istio`, keys in sorted order: `alpn_override`, `config`
 * (`/apis/networking.istio.io/v1alpha3/namespaces/<ns>/destination-rule/<name>`, as istioctl shows it),
 * `default_original_port`, `external`, `services` ([{host, name, namespace}]), `subset`.
 */
export function istioMetadata(m: IstioMetadata): Cluster["metadata"] {
  const fields: JsonObject = {};
  if (m.alpnOverride) fields.alpn_override = "false";
  if (m.rule)
    fields.config = `/apis/networking.istio.io/v1alpha3/namespaces/${m.rule.namespace}/destination-rule/${m.rule.name}`;
  if (m.port !== undefined) fields.default_original_port = m.port;
  if (m.external) fields.external = true;
  if (m.services)
    fields.services = m.services.map(
      (s): JsonValue => ({ host: s.hostname, name: s.name, namespace: s.namespace }),
    );
  if (m.subset) fields.subset = m.subset;
  if (Object.keys(fields).length === 0) return undefined;
  return message(MetadataSchema, { filterMetadata: { istio: fields } });
}
