import type { Any } from "@bufbuild/protobuf/wkt";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { register } from "@grpc/grpc-js-xds";
import { ListenerResourceType } from "@grpc/grpc-js-xds/build/src/xds-resource-type/listener-resource-type.js";
import { RouteConfigurationResourceType } from "@grpc/grpc-js-xds/build/src/xds-resource-type/route-config-resource-type.js";
import type { XdsDecodeContext } from "@grpc/grpc-js-xds/build/src/xds-resource-type/xds-resource-type.js";
import { beforeAll, describe, expect, it } from "vitest";
import type { Listener } from "../../../lib/gen/envoy/config/listener/v3/listener_pb.ts";
import type { Route } from "../../../lib/gen/envoy/config/route/v3/route_components_pb.ts";
import type { RouteConfiguration } from "../../../lib/gen/envoy/config/route/v3/route_pb.ts";
import { HTTPFaultSchema } from "../../../lib/gen/envoy/extensions/filters/http/fault/v3/fault_pb.ts";
import { HttpConnectionManagerSchema } from "../../../lib/gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import { FAULT_FILTER_NAME } from "../../../lib/resources/generators/route-fault.ts";
import { danglingDestinations } from "../../../lib/resources/generators/route-vs.ts";
import type { ServiceView } from "../../../lib/resources/types.ts";
import { toStored } from "../../../lib/resources/version.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { pgvViolations } from "../../support/pgv/index.ts";
import { ctx, HOST } from "../xds/builders.ts";
import { listenerGenerator, routeGenerator } from "../xds/checked-generators.ts";
import { drModel, httpRoute, istioView, vsModel } from "../xds/istio-views.ts";

const DEFAULT = `outbound|9080||${HOST}`;
const V1 = `outbound|9080|v1|${HOST}`;
const V2 = `outbound|9080|v2|${HOST}`;
const GHOST = "ghost.default.svc.cluster.local";
const RATINGS = "ratings.default.svc.cluster.local";

/** The view of reviews (rule: subsets v1, v2) whose one route goes to `route`; ghost has no service. */
function viewOf(route: unknown[], extra: Record<string, unknown> = {}): ServiceView {
  return istioView({
    virtualService: vsModel({ http: [httpRoute({ route, ...extra })] }),
    destinationRule: drModel(),
    destinationHosts: { [GHOST]: { ports: [], subsets: [] }, [RATINGS]: { ports: [7000], subsets: [] } },
    destinationPorts: { [RATINGS]: [7000] },
  });
}

const route9080 = (v: ServiceView): Route => {
  const rc = routeGenerator.generate(v, ctx).find((g) => g.name === `${HOST}:9080`)
    ?.message as RouteConfiguration;
  return rc.virtualHosts[0]?.routes[0] as Route;
};

/** The route as `cluster` or `name=weight[!]` entries (`!`: a fault override of its own), and its fault. */
function summary(r: Route) {
  if (r.action.case !== "route") throw new Error("not a route action");
  const spec = r.action.value.clusterSpecifier;
  const clusters =
    spec.case === "cluster"
      ? [spec.value]
      : spec.case === "weightedClusters"
        ? spec.value.clusters.map(
            (c) =>
              `${c.name}=${c.weight}${Object.hasOwn(c.typedPerFilterConfig, FAULT_FILTER_NAME) ? "!" : ""}`,
          )
        : [];
  return { clusters, fault: faultOf(r.typedPerFilterConfig[FAULT_FILTER_NAME]) };
}

function faultOf(any: Any | undefined) {
  if (!any) return undefined;
  const f = anyUnpack(any, HTTPFaultSchema);
  return {
    abort: f?.abort?.errorType,
    abortPerMillion: f?.abort?.percentage?.numerator,
    delay:
      f?.delay?.faultDelaySecifier.case === "fixedDelay"
        ? Number(f.delay.faultDelaySecifier.value.seconds)
        : undefined,
  };
}

const unavailable = {
  abort: { case: "grpcStatus", value: 14 },
  abortPerMillion: 1_000_000,
  delay: undefined,
};
const dest = (host: string, o: Record<string, unknown> = {}, weight?: number) => ({
  destination: { host, ...o },
  ...(weight !== undefined && { weight }),
});

const cases: {
  name: string;
  route: unknown[];
  extra?: Record<string, unknown>;
  clusters: string[];
  fault: unknown;
}[] = [
  {
    name: "a subset the rule lacks: the default cluster, every call aborted UNAVAILABLE",
    route: [dest("reviews", { subset: "v9" })],
    clusters: [DEFAULT],
    fault: unavailable,
  },
  {
    name: "a host with no service",
    route: [dest("ghost")],
    clusters: [DEFAULT],
    fault: unavailable,
  },
  {
    name: "a port the other host does not have",
    route: [dest("ratings", { port: { number: 7001 } })],
    clusters: [DEFAULT],
    fault: unavailable,
  },
  {
    name: "a port the own host does not have",
    route: [dest("reviews", { port: { number: 9999 } })],
    clusters: [DEFAULT],
    fault: unavailable,
  },
  {
    name: "the route's fault delay still comes first; its abort is replaced",
    route: [dest("reviews", { subset: "v9" })],
    extra: {
      fault: {
        delay: { fixedDelay: "2s", percentage: { value: 100 } },
        abort: { grpcStatus: "ABORTED", percentage: { value: 50 } },
      },
    },
    clusters: [DEFAULT],
    fault: { ...unavailable, delay: 2 },
  },
  {
    name: "a split with one dangling share: that share fails on the default cluster, the rest is routed",
    route: [dest("reviews", { subset: "v1" }, 80), dest("reviews", { subset: "v9" }, 20)],
    clusters: [`${V1}=80`, `${DEFAULT}=20!`],
    fault: undefined,
  },
  {
    name: "several dangling shares are one entry with their summed weight",
    route: [
      dest("reviews", { subset: "v8" }, 10),
      dest("reviews", { subset: "v2" }, 60),
      dest("ghost", {}, 30),
    ],
    clusters: [`${V2}=60`, `${DEFAULT}=40!`],
    fault: undefined,
  },
  {
    name: "a split whose every share dangles: the whole route fails",
    route: [dest("reviews", { subset: "v8" }, 50), dest("ghost", {}, 50)],
    clusters: [DEFAULT],
    fault: unavailable,
  },
  {
    name: "existing destinations are named as they are, another host's only port chosen",
    route: [dest("reviews", { subset: "v1" }, 50), dest("ratings", {}, 50)],
    clusters: [`${V1}=50`, `outbound|7000||${RATINGS}=50`],
    fault: undefined,
  },
  {
    name: "a host the flush did not judge is named as it is",
    route: [dest("api.example.com", { port: { number: 443 } })],
    clusters: ["outbound|443||api.example.com"],
    fault: undefined,
  },
];

describe("dangling route destinations", () => {
  beforeAll(() => register());

  for (const c of cases) {
    it(c.name, async () => {
      const v = viewOf(c.route, c.extra);
      const r = route9080(v);
      expect(summary(r)).toEqual({ clusters: c.clusters, fault: c.fault });
      const answered = c.clusters.some(
        (n) => n.startsWith(DEFAULT) && (c.fault !== undefined || n.endsWith("!")),
      );
      // The listener runs the fault filter before the router exactly when a route or share aborts.
      const listener = listenerGenerator.generate(v, ctx).find((g) => g.name === `${HOST}:9080`)
        ?.message as Listener;
      const hcm =
        listener.apiListener?.apiListener &&
        anyUnpack(listener.apiListener.apiListener, HttpConnectionManagerSchema);
      expect(hcm?.httpFilters.map((f) => f.name)[0]).toBe(
        answered || c.extra ? FAULT_FILTER_NAME : "envoy.filters.http.router",
      );
      expect(danglingDestinations(v).length > 0).toBe(answered);
      await acceptedByGrpcAndPgv(v);
    });
  }

  it("the weighted share's override is a 100% UNAVAILABLE abort, keeping the route's delay", () => {
    const v = viewOf([dest("reviews", { subset: "v1" }, 50), dest("reviews", { subset: "v9" }, 50)], {
      fault: { delay: { fixedDelay: "1s", percentage: { value: 100 } } },
    });
    const r = route9080(v);
    if (r.action.case !== "route" || r.action.value.clusterSpecifier.case !== "weightedClusters")
      throw new Error("no split");
    const [live, lost] = r.action.value.clusterSpecifier.value.clusters;
    expect(live?.typedPerFilterConfig).toEqual({});
    expect(faultOf(lost?.typedPerFilterConfig[FAULT_FILTER_NAME])).toEqual({ ...unavailable, delay: 1 });
    expect(faultOf(r.typedPerFilterConfig[FAULT_FILTER_NAME])?.delay).toBe(1);
  });

  it("danglingDestinations names each route, cluster and reason once", () => {
    const v = viewOf([dest("reviews", { subset: "v9" }, 50), dest("ghost", {}, 50)]);
    expect(danglingDestinations(v).filter((d) => d.route === `${HOST}:9080`)).toEqual([
      {
        route: `${HOST}:9080`,
        cluster: `outbound|9080|v9|${HOST}`,
        reason: `no DestinationRule for ${HOST} defines subset v9`,
      },
      { route: `${HOST}:9080`, cluster: `outbound|9080||${GHOST}`, reason: `no service has host ${GHOST}` },
    ]);
  });
});

const context = { server: {}, bootstrap: { certificateProviders: {} } } as unknown as XdsDecodeContext;

/** grpc-js-xds decodes the view's routes and listeners without error; every message passes PGV. */
async function acceptedByGrpcAndPgv(v: ServiceView) {
  for (const [generator, decoder] of [
    [routeGenerator, RouteConfigurationResourceType.get()],
    [listenerGenerator, ListenerResourceType.get()],
  ] as const) {
    for (const g of generator.generate(v, ctx)) {
      const s = await toStored(g, "default/reviews");
      const typeUrl = generator === routeGenerator ? TypeUrl.route : TypeUrl.listener;
      const result = decoder.decode(context, { type_url: typeUrl, value: Buffer.from(s.body) });
      expect(result.error, g.name).toBeUndefined();
      expect(pgvViolations(g.schema, g.message), g.name).toEqual([]);
    }
  }
}
