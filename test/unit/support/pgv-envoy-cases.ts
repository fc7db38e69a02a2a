/**
 * Rule cases on real Envoy messages (the fields that carry each rule in Envoy's protos): a message
 * Envoy accepts and one it rejects, with the rule the rejection must name.
 */
import type { DescMessage } from "@bufbuild/protobuf";
import { create } from "@bufbuild/protobuf";
import { anyPack, DurationSchema } from "@bufbuild/protobuf/wkt";
import {
  AccessLogFilterSchema,
  GrpcStatusFilterSchema,
} from "../../../lib/gen/envoy/config/accesslog/v3/accesslog_pb.ts";
import {
  Cluster_LbPolicy,
  Cluster_RingHashLbConfigSchema,
  ClusterSchema,
} from "../../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import { OutlierDetectionSchema } from "../../../lib/gen/envoy/config/cluster/v3/outlier_detection_pb.ts";
import {
  HeaderValueSchema,
  MetadataSchema,
  RequestMethod,
} from "../../../lib/gen/envoy/config/core/v3/base_pb.ts";
import { TypedExtensionConfigSchema } from "../../../lib/gen/envoy/config/core/v3/extension_pb.ts";
import { HealthCheck_HttpHealthCheckSchema } from "../../../lib/gen/envoy/config/core/v3/health_check_pb.ts";
import { HttpUriSchema } from "../../../lib/gen/envoy/config/core/v3/http_uri_pb.ts";
import {
  SchemeHeaderTransformationSchema,
  UpstreamHttpProtocolOptionsSchema,
} from "../../../lib/gen/envoy/config/core/v3/protocol_pb.ts";
import {
  FilterChainMatchSchema,
  ListenerFilterChainMatchPredicateSchema,
} from "../../../lib/gen/envoy/config/listener/v3/listener_components_pb.ts";
import {
  DirectResponseActionSchema,
  InternalRedirectPolicySchema,
  RouteMatchSchema,
  VirtualHostSchema,
} from "../../../lib/gen/envoy/config/route/v3/route_components_pb.ts";
import { HTTPFaultSchema } from "../../../lib/gen/envoy/extensions/filters/http/fault/v3/fault_pb.ts";
import { RouterSchema } from "../../../lib/gen/envoy/extensions/filters/http/router/v3/router_pb.ts";
import { StringMatcherSchema } from "../../../lib/gen/envoy/type/matcher/v3/string_pb.ts";

/** One rule, one schema, a passing and a failing value, and what the violation must say. */
export interface RuleCase {
  kind: string;
  schema: DescMessage;
  pass: Record<string, unknown>;
  fail: Record<string, unknown>;
  /** A substring of the violation line. */
  says: string;
  /** The schema the failing value is checked against, when it differs (skip, disabled). */
  failSchema?: DescMessage;
  now?: number;
}

const d = (seconds: number, nanos = 0) => create(DurationSchema, { seconds: BigInt(seconds), nanos });
const vh = (domains: string[]) => ({ name: "v", domains });

/** The rules Envoy's own fields carry. */
export const envoyCases: RuleCase[] = [
  {
    kind: "duration.gt",
    schema: ClusterSchema,
    pass: { name: "c", connectTimeout: d(1) },
    fail: { name: "c", connectTimeout: d(0) },
    says: "connect_timeout: duration.gt 0s (0s)",
  },
  {
    kind: "uint32.lte",
    schema: OutlierDetectionSchema,
    pass: { maxEjectionPercent: 100 },
    fail: { maxEjectionPercent: 101 },
    says: "max_ejection_percent: uint32.lte 100 (101)",
  },
  {
    kind: "uint64.lte",
    schema: Cluster_RingHashLbConfigSchema,
    pass: { minimumRingSize: 1024n },
    fail: { minimumRingSize: 8388609n },
    says: "minimum_ring_size: uint64.lte 8388608",
  },
  {
    kind: "string.min_len",
    schema: StringMatcherSchema,
    pass: { matchPattern: { case: "prefix", value: "/" } },
    fail: { matchPattern: { case: "prefix", value: "" } },
    says: "prefix: string.min_len 1",
  },
  {
    kind: "oneof.required",
    schema: StringMatcherSchema,
    pass: { matchPattern: { case: "exact", value: "" } },
    fail: {},
    says: "match_pattern: oneof.required",
  },
  {
    kind: "oneof.required",
    schema: RouteMatchSchema,
    pass: { pathSpecifier: { case: "prefix", value: "/" } },
    fail: {},
    says: "path_specifier: oneof.required",
  },
  {
    kind: "string.pattern",
    schema: RouteMatchSchema,
    pass: { pathSpecifier: { case: "pathSeparatedPrefix", value: "/api" } },
    fail: { pathSpecifier: { case: "pathSeparatedPrefix", value: "/api/" } },
    says: "path_separated_prefix: string.pattern",
  },
  {
    kind: "repeated.min_items",
    schema: VirtualHostSchema,
    pass: vh(["a"]),
    fail: vh([]),
    says: "domains: repeated.min_items 1 (0 items)",
  },
  {
    kind: "string.well_known_regex",
    schema: VirtualHostSchema,
    pass: vh(["reviews:9080"]),
    fail: vh(["bad\nhost"]),
    says: "domains[0]: string.well_known_regex HTTP_HEADER_VALUE (strict: false)",
  },
  {
    kind: "string.strict",
    schema: VirtualHostSchema,
    pass: vh(["tab\there"]),
    fail: vh(["cr\rhere"]),
    says: "domains[0]: string.well_known_regex",
  },
  {
    kind: "string.min_len",
    schema: VirtualHostSchema,
    pass: vh(["a"]),
    fail: { name: "", domains: ["a"] },
    says: ".name: string.min_len 1",
  },
  {
    kind: "enum.defined_only",
    schema: ClusterSchema,
    pass: { name: "c", lbPolicy: Cluster_LbPolicy.RING_HASH },
    fail: { name: "c", lbPolicy: 77 },
    says: "lb_policy: enum.defined_only",
  },
  {
    kind: "enum.not_in",
    schema: HealthCheck_HttpHealthCheckSchema,
    pass: { path: "/h", method: RequestMethod.GET },
    fail: { path: "/h", method: RequestMethod.CONNECT },
    says: "method: enum.not_in",
  },
  {
    kind: "uint32.lt",
    schema: DirectResponseActionSchema,
    pass: { status: 599 },
    fail: { status: 600 },
    says: "status: uint32.in [200, 600) (600)",
  },
  {
    kind: "uint32.gte",
    schema: DirectResponseActionSchema,
    pass: { status: 200 },
    fail: { status: 199 },
    says: "status: uint32.in [200, 600) (199)",
  },
  {
    kind: "repeated.unique",
    schema: InternalRedirectPolicySchema,
    pass: { responseHeadersToCopy: ["a", "b"] },
    fail: { responseHeadersToCopy: ["a", "a"] },
    says: "response_headers_to_copy[1]: repeated.unique",
  },
  {
    kind: "string.well_known_regex",
    schema: InternalRedirectPolicySchema,
    pass: { responseHeadersToCopy: ["x a"] },
    fail: { responseHeadersToCopy: ["x\na"] },
    says: "response_headers_to_copy[0]: string.well_known_regex HTTP_HEADER_NAME (strict: false)",
  },
  {
    kind: "repeated.items",
    schema: FilterChainMatchSchema,
    pass: { sourcePorts: [1, 65535] },
    fail: { sourcePorts: [0] },
    says: "source_ports[0]: uint32.in [1, 65535] (0)",
  },
  {
    kind: "bool.const",
    schema: ListenerFilterChainMatchPredicateSchema,
    pass: { rule: { case: "anyMatch", value: true } },
    fail: { rule: { case: "anyMatch", value: false } },
    says: "any_match: bool.const true (false)",
  },
  {
    kind: "string.in",
    schema: SchemeHeaderTransformationSchema,
    pass: { transformation: { case: "schemeToOverwrite", value: "https" } },
    fail: { transformation: { case: "schemeToOverwrite", value: "ftp" } },
    says: "scheme_to_overwrite: string.in",
  },
  {
    kind: "string.ignore_empty",
    schema: UpstreamHttpProtocolOptionsSchema,
    pass: { overrideAutoSniHeader: "" },
    fail: { overrideAutoSniHeader: "bad header" },
    says: "override_auto_sni_header: string.well_known_regex HTTP_HEADER_NAME",
  },
  {
    kind: "map.keys",
    schema: MetadataSchema,
    pass: { filterMetadata: { "envoy.lb": {} } },
    fail: { filterMetadata: { "": {} } },
    says: "filter_metadata[]<key>: string.min_len 1",
  },
  {
    kind: "bytes.max_len",
    schema: HeaderValueSchema,
    pass: { key: "k", rawValue: new Uint8Array(3) },
    fail: { key: "k", rawValue: new Uint8Array(16385) },
    says: "raw_value: bytes.max_len 16384",
  },
  {
    kind: "string.well_known_regex",
    schema: HeaderValueSchema,
    pass: { key: "x-k", value: "v" },
    fail: { key: "x\nk", value: "v" },
    says: "key: string.well_known_regex HTTP_HEADER_NAME (strict: false)",
  },
  {
    kind: "any.required",
    schema: TypedExtensionConfigSchema,
    pass: { name: "r", typedConfig: anyPack(RouterSchema, create(RouterSchema)) },
    fail: { name: "r" },
    says: "typed_config: message.required (unset)",
  },
  {
    kind: "any.unpacked",
    schema: TypedExtensionConfigSchema,
    pass: {
      name: "f",
      typedConfig: anyPack(
        HTTPFaultSchema,
        create(HTTPFaultSchema, { delay: { faultDelaySecifier: { case: "fixedDelay", value: d(1) } } }),
      ),
    },
    fail: {
      name: "f",
      typedConfig: anyPack(
        HTTPFaultSchema,
        create(HTTPFaultSchema, { delay: { faultDelaySecifier: { case: "fixedDelay", value: d(0) } } }),
      ),
    },
    says: "typed_config<envoy.extensions.filters.http.fault.v3.HTTPFault>.delay.fixed_delay: duration.gt 0s (0s)",
  },
  {
    kind: "duration.lt",
    schema: HttpUriSchema,
    pass: { uri: "http://x", httpUpstreamType: { case: "cluster", value: "c" }, timeout: d(1) },
    fail: { uri: "http://x", httpUpstreamType: { case: "cluster", value: "c" }, timeout: d(2 ** 32) },
    says: "timeout: duration.in [0s, 4294967296s) (4294967296s)",
  },
  {
    kind: "message.required",
    schema: HttpUriSchema,
    pass: { uri: "http://x", httpUpstreamType: { case: "cluster", value: "c" }, timeout: d(1) },
    fail: { uri: "http://x", httpUpstreamType: { case: "cluster", value: "c" } },
    says: "timeout: message.required (unset)",
  },
  {
    kind: "repeated.items",
    schema: GrpcStatusFilterSchema,
    pass: { statuses: [0, 14] },
    fail: { statuses: [99] },
    says: "statuses[0]: enum.defined_only",
  },
  {
    kind: "oneof.required",
    schema: AccessLogFilterSchema,
    pass: { filterSpecifier: { case: "notHealthCheckFilter", value: {} } },
    fail: {},
    says: "filter_specifier: oneof.required",
  },
];
