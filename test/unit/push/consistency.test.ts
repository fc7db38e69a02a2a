/** Consistency before publishing: hard invariants refused, dangling route references returned. */
import { describe, expect, it } from "vitest";
import type { RouteConfiguration } from "../../../lib/gen/envoy/config/route/v3/route_pb.ts";
import {
  checkConsistent,
  describeDanglingRoute,
  findDanglingRoutes,
  routeClusters,
} from "../../../lib/push/consistency.ts";
import { type DestinationHost, externalHosts } from "../../../lib/registry/istio/route-destinations.ts";
import { destinationHosts } from "../../../lib/resources/destination-hosts.ts";
import { danglingDestinations } from "../../../lib/resources/generators/route-vs.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { ctx, HOST } from "../xds/builders.ts";
import { clusterGenerator, routeGenerator } from "../xds/checked-generators.ts";
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
    view: v,
    routes: routeGenerator.generate(v, ctx).map((g) => g.message as RouteConfiguration),
    clusters: clusterGenerator.generate(v, ctx).map((g) => g.name),
  };
}

describe("dangling route references", () => {
  it("lists every cluster a RouteConfiguration names, once, in order: the missing subset answered on the default cluster", () => {
    const rc = generated().routes.find((r) => r.name === `${HOST}:9080`) as RouteConfiguration;
    expect(routeClusters(rc)).toEqual([
      `outbound|9080||${HOST}`,
      `outbound|9080|v1|${HOST}`,
      `outbound|9080|v2|${HOST}`,
      `outbound|9080||${RATINGS}`,
    ]);
  });

  const cases = [
    {
      name: "without a published check: every other host's cluster named as it is",
      published: undefined,
      want: [
        [`${HOST}:8080`, `outbound|9080||${RATINGS}`],
        [`${HOST}:9080`, `outbound|9080||${RATINGS}`],
      ],
    },
    {
      name: "ratings published: nothing (the own host's clusters all exist)",
      published: (c: string) => c === `outbound|9080||${RATINGS}`,
      want: [],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const { routes, clusters } = generated();
      const found = findDanglingRoutes("default/reviews", HOST, routes, clusters, c.published);
      expect(found.map((d) => [d.route, d.cluster])).toEqual(c.want);
      expect(found.every((d) => d.service === "default/reviews" && d.reason === undefined)).toBe(true);
    });
  }

  it("an own-host cluster the service did not generate is listed with its reason (a generator slip)", () => {
    const { routes, clusters } = generated();
    const fewer = clusters.filter((c) => c !== `outbound|9080|v1|${HOST}`);
    const found = findDanglingRoutes("default/reviews", HOST, routes, fewer, () => true);
    expect(found).toEqual([
      {
        service: "default/reviews",
        route: `${HOST}:9080`,
        cluster: `outbound|9080|v1|${HOST}`,
        reason: "the service does not generate that cluster",
      },
    ]);
  });

  it("the destinations the generator answered UNAVAILABLE, with their reason, once per route and cluster", () => {
    expect(danglingDestinations(generated().view)).toEqual([
      {
        route: `${HOST}:8080`,
        cluster: `outbound|8080|v3|${HOST}`,
        reason: `no DestinationRule for ${HOST} defines subset v3`,
      },
      {
        route: `${HOST}:9080`,
        cluster: `outbound|9080|v3|${HOST}`,
        reason: `no DestinationRule for ${HOST} defines subset v3`,
      },
    ]);
  });
});

describe("destinationHosts: what the other hosts a VirtualService routes to publish", () => {
  const routing = {
    forService: (ns: string, host: string) =>
      ns === "default" && host === RATINGS ? { destinationRule: drModel({ host: "ratings" }) } : {},
  };
  const to = (...hosts: string[]) =>
    vsModel({ http: [httpRoute({ route: hosts.map((host) => ({ destination: { host }, weight: 1 })) })] });
  const cases: {
    name: string;
    hosts: string[];
    ports: Record<string, number[]>;
    want: Record<string, DestinationHost>;
  }[] = [
    {
      name: "a Kubernetes host with a service: its ports and its rule's subsets",
      hosts: ["ratings"],
      ports: { [RATINGS]: [9080] },
      want: { [RATINGS]: { ports: [9080], subsets: ["v1", "v2"] } },
    },
    {
      name: "a Kubernetes host without a service publishes nothing",
      hosts: ["ghost"],
      ports: {},
      want: { "ghost.default.svc.cluster.local": { ports: [], subsets: [] } },
    },
    {
      name: "a Kubernetes host with a service but no rule has no subsets",
      hosts: ["details.shop.svc.cluster.local"],
      ports: { "details.shop.svc.cluster.local": [80, 81] },
      want: { "details.shop.svc.cluster.local": { ports: [80, 81], subsets: [] } },
    },
    {
      name: "another host: judged on its ports when known, else not at all",
      hosts: ["api.example.com", "db.example.com"],
      ports: { "api.example.com": [443] },
      want: { "api.example.com": { ports: [443] } },
    },
    { name: "the own host is the generator's to judge", hosts: ["reviews"], ports: {}, want: {} },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(destinationHosts(routing, to(...c.hosts), HOST, c.ports, "cluster.local")).toEqual(c.want);
    });
  }

  // With the ServiceEntry registry known (the flush passes it), hosts outside Kubernetes are judged too.
  const external = externalHosts([
    { hostname: "api.example.com", namespace: "ext", ports: [{ port: 443 }] },
    { hostname: "ghost.default.svc.cluster.local", namespace: "ext", ports: [{ port: 80 }] },
    { hostname: "*.wild.org", namespace: "ext", ports: [{ port: 443 }] },
  ]);
  const seRouting = {
    forService: (ns: string, host: string) =>
      ns === "ext" && host === "api.example.com"
        ? { destinationRule: drModel({ host: "api.example.com" }) }
        : routing.forService(ns, host),
  };
  const withExternal: { name: string; hosts: string[]; want: Record<string, DestinationHost> }[] = [
    {
      name: "a ServiceEntry host: its ports and the subsets of its namespace's rule",
      hosts: ["api.example.com"],
      want: { "api.example.com": { ports: [443], subsets: ["v1", "v2"] } },
    },
    {
      name: "a host no entry declares publishes nothing",
      hosts: ["db.example.com"],
      want: { "db.example.com": { ports: [], subsets: [] } },
    },
    { name: "a host only a wildcard entry matches is not judged", hosts: ["a.wild.org"], want: {} },
    {
      name: "a Kubernetes-form host with no service that an entry declares: the entry's",
      hosts: ["ghost"],
      want: { "ghost.default.svc.cluster.local": { ports: [80], subsets: [] } },
    },
    {
      name: "a Kubernetes host with a service: as before",
      hosts: ["ratings"],
      want: { [RATINGS]: { ports: [9080], subsets: ["v1", "v2"] } },
    },
  ];
  for (const c of withExternal) {
    it(`with the ServiceEntry registry: ${c.name}`, () => {
      const ports = { [RATINGS]: [9080] };
      expect(destinationHosts(seRouting, to(...c.hosts), HOST, ports, "cluster.local", external)).toEqual(
        c.want,
      );
    });
  }
});

describe("consistency and log lines", () => {
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
    const answered = describeDanglingRoute({
      service: "ns/a\nb",
      route: "r",
      cluster: "outbound|1|x|h",
      reason: "no service has host h\nforged",
    });
    expect(answered).not.toContain("\n");
    expect(answered).toContain("outbound|1|x|h");
    expect(answered).toMatch(/no service has host h.*fail UNAVAILABLE at once/);
    const named = describeDanglingRoute({ service: "ns/a", route: "r", cluster: "outbound|1||other" });
    expect(named).toMatch(/another host's cluster, not published.*once the client stops waiting/);
  });
});
