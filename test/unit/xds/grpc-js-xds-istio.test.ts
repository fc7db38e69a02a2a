/**
 * Resources generated with a VirtualService and a DestinationRule, decoded with @grpc/grpc-js-xds's
 * own resource types: what it would NACK fails here (weights, fault overrides, ring hash, outlier
 * detection, retry policies, the fault filter before the router).
 */
import { create, toBinary } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { register } from "@grpc/grpc-js-xds";
import { ClusterResourceType } from "@grpc/grpc-js-xds/build/src/xds-resource-type/cluster-resource-type.js";
import { EndpointResourceType } from "@grpc/grpc-js-xds/build/src/xds-resource-type/endpoint-resource-type.js";
import { ListenerResourceType } from "@grpc/grpc-js-xds/build/src/xds-resource-type/listener-resource-type.js";
import { RouteConfigurationResourceType } from "@grpc/grpc-js-xds/build/src/xds-resource-type/route-config-resource-type.js";
import type {
  XdsDecodeContext,
  XdsResourceType,
} from "@grpc/grpc-js-xds/build/src/xds-resource-type/xds-resource-type.js";
import { beforeAll, describe, expect, it } from "vitest";
import { OutlierDetectionSchema } from "../../../lib/gen/envoy/config/cluster/v3/outlier_detection_pb.ts";
import { RouteConfigurationSchema } from "../../../lib/gen/envoy/config/route/v3/route_pb.ts";
import { HTTPFaultSchema } from "../../../lib/gen/envoy/extensions/filters/http/fault/v3/fault_pb.ts";
import { StringMatcherSchema } from "../../../lib/gen/envoy/type/matcher/v3/string_pb.ts";
import { FAULT_FILTER_NAME } from "../../../lib/resources/generators/route-fault.ts";
import { toStored } from "../../../lib/resources/version.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { pgvViolations } from "../../support/pgv/index.ts";
import { ctx } from "./builders.ts";
import { generateAll } from "./checked-generators.ts";
import { drModel, httpRoute, istioView, vsModel } from "./istio-views.ts";

const context = { server: {}, bootstrap: { certificateProviders: {} } } as unknown as XdsDecodeContext;
/** The types grpc-js-xds decodes: proxyless gRPC reads its certificates from files, not SDS. */
const decoders = {
  [TypeUrl.listener]: ListenerResourceType.get(),
  [TypeUrl.route]: RouteConfigurationResourceType.get(),
  [TypeUrl.cluster]: ClusterResourceType.get(),
  [TypeUrl.endpoint]: EndpointResourceType.get(),
} satisfies Partial<Record<TypeUrl, XdsResourceType>>;
type Decoded = keyof typeof decoders;

const vs = vsModel({
  http: [
    httpRoute({
      name: "hdr",
      match: [{ headers: { "x-user": { exact: "jason" }, "x-any": {} }, uri: { regex: "/pkg\\.S/.*" } }],
      route: [{ destination: { host: "reviews", subset: "v2" } }],
      timeout: "2s",
      retries: { attempts: 3, retryOn: "unavailable,5xx", perTryTimeout: "500ms" },
    }),
    httpRoute({
      match: [{ uri: { prefix: "/pkg.S/Slow" }, ignoreUriCase: true }],
      fault: {
        delay: { fixedDelay: "1s", percentage: { value: 50 } },
        abort: { httpStatus: 503, percentage: { value: 10 } },
      },
    }),
    { match: [{ uri: { exact: "/pkg.S/Gone" } }], directResponse: { status: 404 } },
    { match: [{ uri: { exact: "/pkg.S/Old" } }], redirect: { uri: "/pkg.S/New" } },
    {
      route: [
        { destination: { host: "reviews", subset: "v1" }, weight: 80 },
        { destination: { host: "reviews", subset: "v2" }, weight: 20 },
        { destination: { host: "reviews", subset: "v3" }, weight: 0 },
      ],
    },
  ],
});
const dr = drModel({
  trafficPolicy: {
    loadBalancer: { consistentHash: { httpHeaderName: "x-user", ringHash: { minimumRingSize: 4096 } } },
    connectionPool: { http: { http2MaxRequests: 10 } },
    outlierDetection: {
      consecutive5xxErrors: 2,
      consecutiveGatewayErrors: 1,
      interval: "1s",
      baseEjectionTime: "2s",
    },
  },
  subsets: [
    { name: "v1", labels: { version: "v1" }, trafficPolicy: { loadBalancer: { simple: "LEAST_REQUEST" } } },
    { name: "v2", labels: { version: "v2" } },
  ],
});

describe("VirtualService / DestinationRule resources pass grpc-js-xds validation", () => {
  beforeAll(() => register());

  for (const { typeUrl, resources } of generateAll(
    istioView({ virtualService: vs, destinationRule: dr }),
    ctx,
  ).filter((g): g is typeof g & { typeUrl: Decoded } => g.typeUrl in decoders)) {
    it(`${typeUrl.split(".").at(-1)}: ${resources.length} resources`, async () => {
      expect(resources.length).toBeGreaterThan(0);
      for (const g of resources) {
        const s = await toStored(g, "default/reviews");
        const result = decoders[typeUrl].decode(context, { type_url: typeUrl, value: Buffer.from(s.body) });
        expect(result.error, g.name).toBeUndefined();
        expect(result.name).toBe(g.name);
      }
    });
  }

  it("every resource is valid against Envoy's protoc-gen-validate rules", () => {
    const all = [
      ...generateAll(istioView({ virtualService: vs, destinationRule: dr }), ctx),
      ...generateAll(istioView(), ctx),
    ];
    let checked = 0;
    for (const { resources } of all)
      for (const g of resources) {
        expect(pgvViolations(g.schema, g.message), g.name).toEqual([]);
        checked++;
      }
    expect(checked).toBeGreaterThan(10);
  });

  it("the PGV checker is live: a zero fixed delay, a 101% ejection, an empty prefix are caught", () => {
    const fault = create(HTTPFaultSchema, {
      delay: { faultDelaySecifier: { case: "fixedDelay", value: { seconds: 0n, nanos: 0 } } },
    });
    expect(pgvViolations(HTTPFaultSchema, fault).join()).toMatch(/fixed_delay: duration.gt 0s \(0s\)/);
    const od = create(OutlierDetectionSchema, { maxEjectionPercent: 101 });
    expect(pgvViolations(OutlierDetectionSchema, od).join()).toMatch(
      /max_ejection_percent: uint32.lte 100 \(101\)/,
    );
    const sm = create(StringMatcherSchema, { matchPattern: { case: "prefix", value: "" } });
    expect(pgvViolations(StringMatcherSchema, sm).join()).toMatch(/prefix: string.min_len 1/);
  });

  it("the validator is live: weights summing to 0 and a fault without percentage are rejected", () => {
    const rc = (fault: boolean) =>
      create(RouteConfigurationSchema, {
        name: "r",
        virtualHosts: [
          {
            name: "r",
            domains: ["r"],
            routes: [
              {
                match: { pathSpecifier: { case: "prefix", value: "/" } },
                action: {
                  case: "route",
                  value: fault
                    ? { clusterSpecifier: { case: "cluster", value: "c" } }
                    : {
                        clusterSpecifier: {
                          case: "weightedClusters",
                          value: { clusters: [{ name: "c", weight: 0 }] },
                        },
                      },
                },
                typedPerFilterConfig: fault
                  ? {
                      [FAULT_FILTER_NAME]: anyPack(
                        HTTPFaultSchema,
                        create(HTTPFaultSchema, { abort: { errorType: { case: "httpStatus", value: 503 } } }),
                      ),
                    }
                  : {},
              },
            ],
          },
        ],
      });
    const decode = (fault: boolean) =>
      decoders[TypeUrl.route].decode(context, {
        type_url: TypeUrl.route,
        value: Buffer.from(toBinary(RouteConfigurationSchema, rc(fault))),
      }).error;
    expect(decode(false)).toMatch(/sum of weights is 0/);
    expect(decode(true)).toMatch(/typed_per_filter_config/);
  });
});
