/** Which services a push regenerates, table-driven over a memory store with three services. */
import { describe, expect, it } from "vitest";
import { pushRequest } from "../../../lib/model/index.ts";
import { externalRoutingTo, servicesInScope } from "../../../lib/push/scope.ts";
import { externalHosts } from "../../../lib/registry/istio/route-destinations.ts";
import { keys } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { httpRoute, vsModel } from "../xds/istio-views.ts";

const reviews = "reviews.default.svc.cluster.local";
const ratings = "ratings.shop.svc.cluster.local";
const details = "details.default.svc.cluster.local";

async function store() {
  const s = createMemoryStore();
  for (const [ns, host] of [
    ["default", reviews],
    ["shop", ratings],
    ["default", details],
  ] as const)
    await s.put(keys.service(ns, host, "east"), {
      hostname: host,
      namespace: ns,
      clusterId: "east",
      ports: [],
    });
  return s;
}

describe("servicesInScope", () => {
  const cases: { name: string; configs: string[] | null; want: string[] }[] = [
    {
      name: "service keys name their services",
      configs: [`ServiceEntry/default/${reviews}`],
      want: [reviews],
    },
    {
      name: "a VirtualService key with the service keys of its hosts: only those",
      configs: [
        "VirtualService/default/reviews",
        `ServiceEntry/default/${reviews}`,
        `ServiceEntry/shop/${ratings}`,
      ],
      want: [ratings, reviews],
    },
    {
      name: "a DestinationRule key whose host has no service: nothing",
      configs: ["DestinationRule/default/ghost"],
      want: [],
    },
    {
      name: "a Sidecar key: no service (it changes the view table only)",
      configs: ["Sidecar/default/default"],
      want: [],
    },
    {
      name: "an AuthorizationPolicy key: no service (it shapes the inbound side of the proxies it selects)",
      configs: ["AuthorizationPolicy/default/deny-all"],
      want: [],
    },
    {
      name: "a PeerAuthentication key: its namespace's services (proxyless auto-mTLS toward them)",
      configs: ["PeerAuthentication/default/strict"],
      want: [details, reviews],
    },
    {
      name: "a mesh-wide PeerAuthentication (root namespace): every service",
      configs: ["PeerAuthentication/istio-system/default"],
      want: [details, ratings, reviews],
    },
    { name: "unknown scope: every service", configs: null, want: [details, ratings, reviews] },
  ];
  it.each(cases)("$name", async ({ configs, want }) => {
    const refs = await servicesInScope(
      await store(),
      pushRequest({ full: true, configs, reason: "config", start: 0 }),
      "istio-system",
    );
    expect(refs.map((r) => r.hostname).sort()).toEqual(want);
  });
  it("the root namespace is the mesh's: a PeerAuthentication in istio-system under root mesh-root is namespaced", async () => {
    const request = pushRequest({
      full: true,
      configs: ["PeerAuthentication/istio-system/default"],
      reason: "config",
      start: 0,
    });
    expect(await servicesInScope(await store(), request, "mesh-root")).toEqual([]);
    const wide = { ...request, configsUpdated: ["PeerAuthentication/mesh-root/default"] };
    expect((await servicesInScope(await store(), wide, "mesh-root")).length).toBe(3);
  });
});

describe("externalRoutingTo: ServiceEntry hosts whose VirtualService routes to a changed host", () => {
  const external = externalHosts([
    { hostname: "front.example.com", namespace: "ext", ports: [{ port: 80 }] },
    { hostname: "front.example.com", namespace: "edge", ports: [{ port: 80 }] },
    { hostname: "plain.example.com", namespace: "ext", ports: [{ port: 80 }] },
  ]);
  const routesTo = (host: string) =>
    vsModel({ hosts: ["front.example.com"], http: [httpRoute({ route: [{ destination: { host } }] })] });
  const vs = routesTo("api.example.com");
  const routing = {
    forService: (ns: string, host: string) =>
      host === "front.example.com" && ns === "ext" ? { virtualService: vs } : {},
  };
  const cases: { name: string; hosts: string[]; want: string[] }[] = [
    {
      name: "a destination of the VirtualService",
      hosts: ["api.example.com"],
      want: ["ext/front.example.com"],
    },
    { name: "a host no route names", hosts: [reviews], want: [] },
    { name: "nothing changed", hosts: [], want: [] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const got = externalRoutingTo(routing, external, new Set(c.hosts));
      expect(got.map((r) => `${r.namespace}/${r.hostname}`)).toEqual(c.want);
    });
  }
});
