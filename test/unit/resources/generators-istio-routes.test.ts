/** RDS and LDS from a VirtualService (and the DestinationRule's hash), decoded field by field. */
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import type { Listener } from "../../../lib/gen/envoy/config/listener/v3/listener_pb.ts";
import type { Route, RouteAction } from "../../../lib/gen/envoy/config/route/v3/route_components_pb.ts";
import type { RouteConfiguration } from "../../../lib/gen/envoy/config/route/v3/route_pb.ts";
import { HTTPFaultSchema } from "../../../lib/gen/envoy/extensions/filters/http/fault/v3/fault_pb.ts";
import { HttpConnectionManagerSchema } from "../../../lib/gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import type { ServiceView } from "../../../lib/resources/types.ts";
import { ctx, HOST } from "../xds/builders.ts";
import { listenerGenerator, routeGenerator } from "../xds/checked-generators.ts";
import { drModel, httpRoute, istioView, vsModel } from "../xds/istio-views.ts";

const V1 = `outbound|9080|v1|${HOST}`;
const V2 = `outbound|9080|v2|${HOST}`;
const DEFAULT = `outbound|9080||${HOST}`;

function routes(v: ServiceView, port = 9080): Route[] {
  const rc = routeGenerator.generate(v, ctx).find((g) => g.name === `${HOST}:${port}`)
    ?.message as RouteConfiguration;
  return rc.virtualHosts[0]?.routes ?? [];
}
const action = (r: Route | undefined): RouteAction => {
  if (r?.action.case !== "route") throw new Error("not a route action");
  return r.action.value;
};
const ms = (d: { seconds: bigint; nanos: number } | undefined) =>
  d === undefined ? undefined : Number(d.seconds) * 1000 + d.nanos / 1e6;
const fault = (r: Route | undefined) => {
  const any = r?.typedPerFilterConfig["envoy.filters.http.fault"];
  return any ? anyUnpack(any, HTTPFaultSchema) : undefined;
};

describe("RDS from a VirtualService", () => {
  it("header match to subset v2, then the catch-all route to v1: no default route added", () => {
    const vs = vsModel({
      http: [
        httpRoute({
          name: "canary",
          match: [{ name: "tester", headers: { "X-User": { exact: "jason" } } }],
          route: [{ destination: { host: "reviews", subset: "v2" } }],
        }),
        httpRoute(),
      ],
    });
    const rs = routes(istioView({ virtualService: vs, destinationRule: drModel() }));
    expect(rs.map((r) => r.name)).toEqual(["canary.tester", ""]);
    expect(rs[0]?.match?.headers.map((h) => [h.name, h.headerMatchSpecifier])).toMatchObject([
      ["x-user", { case: "stringMatch", value: { matchPattern: { case: "exact", value: "jason" } } }],
    ]);
    expect(rs[0]?.match?.pathSpecifier).toEqual({ case: "prefix", value: "/" });
    expect(rs[0]?.match?.caseSensitive).toBe(true);
    expect(action(rs[0]).clusterSpecifier).toEqual({ case: "cluster", value: V2 });
    expect(action(rs[1]).clusterSpecifier).toEqual({ case: "cluster", value: V1 });
  });

  it("matches only: no default route follows (as istiod: an unmatched call fails)", () => {
    const vs = vsModel({ http: [httpRoute({ match: [{ uri: { prefix: "/pkg.Svc/" } }] })] });
    const rs = routes(istioView({ virtualService: vs, destinationRule: drModel() }));
    expect(rs.map((r) => r.name)).toEqual([""]);
    expect(rs[0]?.match?.pathSpecifier).toEqual({ case: "prefix", value: "/pkg.Svc/" });
  });

  it("a VirtualService with no route for the port: the default route alone", () => {
    const vs = vsModel({ http: [httpRoute({ match: [{ port: 8080, uri: { prefix: "/a" } }] })] });
    const rs = routes(istioView({ virtualService: vs, destinationRule: drModel() }), 9080);
    expect(rs.map((r) => r.name)).toEqual(["default"]);
    expect(action(rs[0]).clusterSpecifier).toEqual({ case: "cluster", value: DEFAULT });
  });

  const matchCases = [
    { uri: { exact: "/pkg.Svc/Get" }, want: { case: "path", value: "/pkg.Svc/Get" } },
    { uri: { prefix: "/pkg.Svc/" }, want: { case: "prefix", value: "/pkg.Svc/" } },
    {
      uri: { regex: "/pkg\\.Svc/(Get|List)" },
      want: { case: "safeRegex", value: { regex: "/pkg\\.Svc/(Get|List)" } },
    },
  ];
  for (const c of matchCases) {
    it(`uri ${Object.keys(c.uri)[0]} ▶ ${c.want.case}, case-insensitive when ignoreUriCase`, () => {
      const vs = vsModel({ http: [httpRoute({ match: [{ uri: c.uri, ignoreUriCase: true }] })] });
      const m = routes(istioView({ virtualService: vs, destinationRule: drModel() }))[0]?.match;
      expect(m?.pathSpecifier).toMatchObject(c.want);
      expect(m?.caseSensitive).toBe(false);
    });
  }

  it("header kinds: exact, prefix, regex, present; sorted by name", () => {
    const vs = vsModel({
      http: [
        httpRoute({
          match: [{ headers: { d: { regex: "a+" }, c: {}, b: { prefix: "p" }, a: { exact: "x" } } }],
        }),
      ],
    });
    const hs = routes(istioView({ virtualService: vs, destinationRule: drModel() }))[0]?.match?.headers ?? [];
    expect(hs.map((h) => h.name)).toEqual(["a", "b", "c", "d"]);
    expect(hs.map((h) => h.headerMatchSpecifier)).toMatchObject([
      { case: "stringMatch", value: { matchPattern: { case: "exact", value: "x" } } },
      { case: "stringMatch", value: { matchPattern: { case: "prefix", value: "p" } } },
      { case: "presentMatch", value: true },
      { case: "stringMatch", value: { matchPattern: { case: "safeRegex", value: { regex: "a+" } } } },
    ]);
  });

  it('empty prefix / regex conditions (any value) ▶ present_match and prefix "/", never an empty matcher', () => {
    const vs = vsModel({
      http: [
        httpRoute({ match: [{ uri: { regex: "" }, headers: { a: { prefix: "" }, b: { regex: "" } } }] }),
      ],
    });
    const m = routes(istioView({ virtualService: vs, destinationRule: drModel() }))[0]?.match;
    expect(m?.pathSpecifier).toEqual({ case: "prefix", value: "/" });
    expect(m?.headers.map((h) => h.headerMatchSpecifier)).toEqual([
      { case: "presentMatch", value: true },
      { case: "presentMatch", value: true },
    ]);
  });

  it("weights: an 80/20 split to subsets as weighted clusters, weights as given", () => {
    const vs = vsModel({
      http: [
        {
          route: [
            { destination: { host: "reviews", subset: "v1" }, weight: 80 },
            { destination: { host: "reviews", subset: "v2" }, weight: 20 },
          ],
        },
      ],
    });
    const spec = action(
      routes(istioView({ virtualService: vs, destinationRule: drModel() }))[0],
    ).clusterSpecifier;
    expect(spec.case).toBe("weightedClusters");
    const clusters = spec.case === "weightedClusters" ? spec.value.clusters : [];
    expect(clusters.map((c) => [c.name, c.weight])).toEqual([
      [V1, 80],
      [V2, 20],
    ]);
    expect(spec.case === "weightedClusters" && spec.value.totalWeight).toBeUndefined();
  });

  it("timeout ▶ route timeout and max_stream_duration; no timeout ▶ 0s (none)", () => {
    const vs = vsModel({
      http: [httpRoute({ match: [{ uri: { prefix: "/a" } }], timeout: "1.5s" }), httpRoute()],
    });
    const [timed, plain] = routes(istioView({ virtualService: vs, destinationRule: drModel() }));
    expect(ms(action(timed).timeout)).toBe(1500);
    expect(ms(action(timed).maxStreamDuration?.maxStreamDuration)).toBe(1500);
    expect(action(timed).maxStreamDuration?.grpcTimeoutHeaderMax).toBeUndefined();
    expect(ms(action(plain).timeout)).toBe(0);
    expect(ms(action(plain).maxStreamDuration?.maxStreamDuration)).toBe(0);
  });

  const retryCases = [
    {
      name: "none set: Istio's default policy",
      retries: undefined,
      want: {
        retryOn: "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes",
        num: 2,
        codes: [503],
      },
    },
    {
      name: "attempts and gRPC codes, per-try timeout",
      retries: { attempts: 3, retryOn: "unavailable,deadline-exceeded", perTryTimeout: "250ms" },
      want: { retryOn: "unavailable,deadline-exceeded", num: 3, codes: [], perTry: 250 },
    },
    {
      name: "HTTP codes add retriable-status-codes",
      retries: { attempts: 1, retryOn: "5xx,503,internal" },
      want: { retryOn: "5xx,internal,retriable-status-codes", num: 1, codes: [503] },
    },
  ];
  for (const c of retryCases) {
    it(`retries: ${c.name}`, () => {
      const vs = vsModel({ http: [httpRoute(c.retries ? { retries: c.retries } : {})] });
      const p = action(routes(istioView({ virtualService: vs, destinationRule: drModel() }))[0]).retryPolicy;
      expect(p?.retryOn).toBe(c.want.retryOn);
      expect(p?.numRetries).toBe(c.want.num);
      expect(p?.retriableStatusCodes).toEqual(c.want.codes);
      expect(ms(p?.perTryTimeout)).toBe(c.want.perTry);
    });
  }

  it("retries with attempts 0: no retry policy", () => {
    const vs = vsModel({ http: [httpRoute({ retries: { attempts: 0 } })] });
    expect(
      action(routes(istioView({ virtualService: vs, destinationRule: drModel() }))[0]).retryPolicy,
    ).toBeUndefined();
  });

  it("fault: fixed delay and gRPC abort with percentages per million; the listener gains the fault filter", () => {
    const vs = vsModel({
      http: [
        httpRoute({
          fault: {
            delay: { fixedDelay: "2s", percentage: { value: 12.5 } },
            abort: { grpcStatus: "UNAVAILABLE", percentage: { value: 100 } },
          },
        }),
      ],
    });
    const v = istioView({ virtualService: vs, destinationRule: drModel() });
    const f = fault(routes(v)[0]);
    expect(f?.delay?.faultDelaySecifier.case).toBe("fixedDelay");
    expect(ms(f?.delay?.faultDelaySecifier.value as never)).toBe(2000);
    expect(f?.delay?.percentage).toMatchObject({ numerator: 125000, denominator: 2 });
    expect(f?.abort?.errorType).toEqual({ case: "grpcStatus", value: 14 });
    expect(f?.abort?.percentage).toMatchObject({ numerator: 1_000_000, denominator: 2 });
    expect(filters(v)).toEqual(["envoy.filters.http.fault", "envoy.filters.http.router"]);
  });

  it("no fault: the listener keeps the router alone", () => {
    const v = istioView({ virtualService: vsModel(), destinationRule: drModel() });
    expect(filters(v)).toEqual(["envoy.filters.http.router"]);
    expect(fault(routes(v)[0])).toBeUndefined();
  });

  it("directResponse and redirect ▶ every call aborted with that HTTP status (grpc-js NACKs those actions)", () => {
    const vs = vsModel({
      http: [
        { match: [{ uri: { prefix: "/old" } }], redirect: { uri: "/new" } },
        { match: [{ uri: { prefix: "/gone" } }], directResponse: { status: 503 } },
        httpRoute(),
      ],
    });
    const rs = routes(istioView({ virtualService: vs, destinationRule: drModel() }));
    expect(rs.map((r) => r.action.case)).toEqual(["route", "route", "route"]);
    expect(fault(rs[0])?.abort?.errorType).toEqual({ case: "httpStatus", value: 301 });
    expect(fault(rs[1])?.abort?.errorType).toEqual({ case: "httpStatus", value: 503 });
    expect(fault(rs[1])?.abort?.percentage?.numerator).toBe(1_000_000);
    expect(action(rs[1]).clusterSpecifier).toEqual({ case: "cluster", value: DEFAULT });
  });

  it("an HTTP status of 600 (istiod accepts it, Envoy refuses it) ▶ that route is left out", () => {
    const vs = vsModel({
      http: [
        { match: [{ uri: { prefix: "/gone" } }], directResponse: { status: 600 } },
        httpRoute({ match: [{ uri: { prefix: "/flaky" } }], fault: { abort: { httpStatus: 600 } } }),
        httpRoute(),
      ],
    });
    const rs = routes(istioView({ virtualService: vs, destinationRule: drModel() }));
    expect(rs.map((r) => r.match?.pathSpecifier.case)).toEqual(["prefix"]);
    expect(rs[0]?.match?.pathSpecifier.value).toBe("/");
  });

  it("consistent hash on a header ▶ the route's header hash policy", () => {
    const dr = drModel({ trafficPolicy: { loadBalancer: { consistentHash: { httpHeaderName: "x-user" } } } });
    const rs = routes(istioView({ virtualService: vsModel(), destinationRule: dr }));
    expect(action(rs[0]).hashPolicy.map((h) => h.policySpecifier)).toMatchObject([
      { case: "header", value: { headerName: "x-user" } },
    ]);
    expect(
      action(routes(istioView({ virtualService: vsModel(), destinationRule: drModel() }))[0]).hashPolicy,
    ).toEqual([]);
  });

  it("no VirtualService: the default route carries the rule's header hash for its port only", () => {
    const dr = drModel({
      trafficPolicy: {
        loadBalancer: { consistentHash: { httpHeaderName: "x-user" } },
        portLevelSettings: [{ port: { number: 8080 }, loadBalancer: { simple: "ROUND_ROBIN" } }],
      },
    });
    const v = istioView({ destinationRule: dr });
    expect(routes(v, 9080).map((r) => r.name)).toEqual(["default"]);
    expect(action(routes(v, 9080)[0]).hashPolicy.map((h) => h.policySpecifier)).toMatchObject([
      { case: "header", value: { headerName: "x-user" } },
    ]);
    expect(action(routes(v, 8080)[0]).hashPolicy).toEqual([]);
  });

  it("match ports: a match bound to 8080 is absent from the 9080 routes", () => {
    const vs = vsModel({ http: [httpRoute({ match: [{ port: 8080, uri: { prefix: "/a" } }] })] });
    const v = istioView({ virtualService: vs, destinationRule: drModel() });
    expect(routes(v, 9080).map((r) => r.name)).toEqual(["default"]);
    expect(routes(v, 8080).map((r) => r.name)).toEqual([""]);
    // A destination without a port on a two-port service takes the listener's port.
    expect(action(routes(v, 8080)[0]).clusterSpecifier).toEqual({
      case: "cluster",
      value: `outbound|8080|v1|${HOST}`,
    });
  });

  it("another host: its only port from destinationPorts, else the listener's", () => {
    const vs = vsModel({ http: [httpRoute({ route: [{ destination: { host: "ratings" } }] })] });
    const ratings = "ratings.default.svc.cluster.local";
    const c = (v: ServiceView) => action(routes(v)[0]).clusterSpecifier;
    expect(c(istioView({ virtualService: vs, destinationRule: drModel() }))).toEqual({
      case: "cluster",
      value: `outbound|9080||${ratings}`,
    });
    expect(c(istioView({ virtualService: vs, destinationPorts: { [ratings]: [7000] } }))).toEqual({
      case: "cluster",
      value: `outbound|7000||${ratings}`,
    });
  });

  it("a match on a condition a shared route cannot hold (sourceLabels) is left out", () => {
    const vs = vsModel({ http: [httpRoute({ match: [{ sourceLabels: { app: "x" } }] })] });
    expect(routes(istioView({ virtualService: vs, destinationRule: drModel() })).map((r) => r.name)).toEqual([
      "default",
    ]);
  });
});

function filters(v: ServiceView): string[] {
  const l = listenerGenerator.generate(v, ctx)[1]?.message as Listener;
  const any = l.apiListener?.apiListener;
  return any ? (anyUnpack(any, HttpConnectionManagerSchema)?.httpFilters.map((f) => f.name) ?? []) : [];
}
