/** Consistency before publishing: hard invariants refused, dangling route references returned. */
import { describe, expect, it } from "vitest";
import type { RouteConfiguration } from "../../../lib/gen/envoy/config/route/v3/route_pb.ts";
import {
  checkConsistent,
  describeDanglingRoute,
  findDanglingRoutes,
  routeClusters,
} from "../../../lib/push/consistency.ts";
import { clusterGenerator, routeGenerator } from "../../../lib/xds/generators/index.ts";
import { TypeUrl } from "../../../lib/xds/types.ts";
import { ctx, HOST } from "../xds/builders.ts";
import { drModel, httpRoute, istioView, vsModel } from "../xds/istio-views.ts";

const RATINGS = "ratings.default.svc.cluster.local";

/** reviews: header ▶ subset v3 (no such subset), weighted v1/v2, then a catch-all to ratings. */
function generated() {
  const vs = vsModel({
    http: [
      httpRoute({
        match: [{ headers: { x: { exact: "1" } } }],
        route: [{ destination: { host: "reviews", subset: "v3" } }],
      }),
      httpRoute({
        match: [{ uri: { prefix: "/a" } }],
        route: [
          { destination: { host: "reviews", subset: "v1" }, weight: 50 },
          { destination: { host: "reviews", subset: "v2" }, weight: 50 },
        ],
      }),
      httpRoute({ route: [{ destination: { host: "ratings", port: { number: 9080 } } }] }),
    ],
  });
  const v = istioView({ virtualService: vs, destinationRule: drModel() });
  return {
    routes: routeGenerator.generate(v, ctx).map((g) => g.message as RouteConfiguration),
    clusters: clusterGenerator.generate(v, ctx).map((g) => g.name),
  };
}

describe("dangling route references", () => {
  it("lists every cluster a RouteConfiguration names, once, in order", () => {
    const rc = generated().routes.find((r) => r.name === `${HOST}:9080`) as RouteConfiguration;
    expect(routeClusters(rc)).toEqual([
      `outbound|9080|v3|${HOST}`,
      `outbound|9080|v1|${HOST}`,
      `outbound|9080|v2|${HOST}`,
      `outbound|9080||${RATINGS}`,
    ]);
  });

  const cases = [
    {
      name: "without a published check: the missing subset and every other host's cluster",
      published: undefined,
      want: [
        ["own", `${HOST}:8080`, `outbound|8080|v3|${HOST}`],
        ["other", `${HOST}:8080`, `outbound|9080||${RATINGS}`],
        ["own", `${HOST}:9080`, `outbound|9080|v3|${HOST}`],
        ["other", `${HOST}:9080`, `outbound|9080||${RATINGS}`],
      ],
    },
    {
      name: "ratings published: only the missing subset",
      published: (c: string) => c === `outbound|9080||${RATINGS}`,
      want: [
        ["own", `${HOST}:8080`, `outbound|8080|v3|${HOST}`],
        ["own", `${HOST}:9080`, `outbound|9080|v3|${HOST}`],
      ],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const { routes, clusters } = generated();
      const found = findDanglingRoutes("default/reviews", HOST, routes, clusters, c.published);
      expect(found.map((d) => [d.kind, d.route, d.cluster])).toEqual(c.want);
      expect(found.every((d) => d.service === "default/reviews")).toBe(true);
    });
  }

  it("a dangling route is no hard problem: checkConsistent still passes", () => {
    const { routes, clusters } = generated();
    const names = new Map<string, readonly string[]>([
      [TypeUrl.cluster, clusters],
      [TypeUrl.endpoint, clusters],
      [TypeUrl.listener, routes.map((r) => r.name)],
      [TypeUrl.route, routes.map((r) => r.name)],
    ]);
    expect(checkConsistent("default/reviews", names)).toEqual([]);
    expect(checkConsistent("default/reviews", new Map([...names, [TypeUrl.endpoint, []]]))).toHaveLength(
      clusters.length,
    );
  });

  it("describes one as a log line with outside text escaped", () => {
    const line = describeDanglingRoute({
      service: "ns/a\nb",
      route: "r",
      cluster: "outbound|1|x|h",
      kind: "own",
    });
    expect(line).not.toContain("\n");
    expect(line).toContain("outbound|1|x|h");
    expect(line).toContain("UNAVAILABLE");
  });
});
