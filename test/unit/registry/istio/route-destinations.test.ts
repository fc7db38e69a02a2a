/** Whether a route destination names a cluster its host publishes (pure), and a Kubernetes host's namespace. */
import { describe, expect, it } from "vitest";
import { kubeServiceNamespace } from "../../../../lib/model/index.ts";
import {
  type DestinationHost,
  danglingReason,
  destinationPort,
  externalDestination,
  externalHosts,
} from "../../../../lib/registry/istio/route-destinations.ts";
import type { RouteDestination } from "../../../../lib/registry/istio/virtual-service.ts";

const H = "reviews.default.svc.cluster.local";
const d = (o: Partial<RouteDestination> = {}): RouteDestination => ({ host: H, weight: 100, ...o });
const host = (o: Partial<DestinationHost> = {}): DestinationHost => ({
  ports: [9080],
  subsets: ["v1"],
  ...o,
});

describe("danglingReason", () => {
  const cases: [string, RouteDestination, number, DestinationHost | undefined, string | undefined][] = [
    ["not known: not judged", d({ subset: "v9" }), 9080, undefined, undefined],
    ["no service", d(), 9080, host({ ports: [] }), `no service has host ${H}`],
    ["the listener's port on a one-port service: its only port", d(), 7000, host(), undefined],
    [
      "the listener's port on a two-port service it lacks",
      d(),
      7000,
      host({ ports: [80, 81] }),
      `service ${H} has no port 7000`,
    ],
    ["an explicit port it lacks", d({ port: 9081 }), 9080, host(), `service ${H} has no port 9081`],
    ["a subset it defines", d({ subset: "v1" }), 9080, host(), undefined],
    ["a subset it lacks", d({ subset: "v9" }), 9080, host(), `no DestinationRule for ${H} defines subset v9`],
    ["subsets not known: not judged", d({ subset: "v9" }), 9080, { ports: [9080] }, undefined],
  ];
  it.each(cases)("%s", (_, dest, listener, h, want) => expect(danglingReason(dest, listener, h)).toBe(want));

  it("destinationPort: its own, else the only port, else the listener's", () => {
    expect(destinationPort(d({ port: 1 }), 2, [3])).toBe(1);
    expect(destinationPort(d(), 2, [3])).toBe(3);
    expect(destinationPort(d(), 2, [3, 4])).toBe(2);
    expect(destinationPort(d(), 2)).toBe(2);
  });
});

describe("kubeServiceNamespace", () => {
  it.each([
    [H, "default"],
    ["a.b.svc.cluster.local", "b"],
    ["a.b.c.svc.cluster.local", undefined],
    ["b.svc.cluster.local", undefined],
    [".b.svc.cluster.local", undefined],
    ["api.example.com", undefined],
    ["*.b.svc.cluster.local", undefined],
    ["a.b.svc.other.local", undefined],
  ])("%s ▶ %s", (h, want) => expect(kubeServiceNamespace(h, "cluster.local")).toBe(want));
});

describe("externalDestination: a host outside Kubernetes judged against the ServiceEntry registry", () => {
  const svc = (hostname: string, namespace: string, ...ports: number[]) => ({
    hostname,
    namespace,
    ports: ports.map((port) => ({ port })),
  });
  const external = externalHosts([
    svc("api.example.com", "ext", 443, 80),
    svc("api.example.com", "other", 8443),
    svc("db.example.com", "ext", 5432),
    svc("*.wild.org", "ext", 443),
  ]);
  const rules: Record<string, string[]> = { ext: ["v1"], other: ["v2"] };
  const cases: [string, string, DestinationHost | undefined][] = [
    [
      "declared in two namespaces: every port, the subsets of either namespace's rule",
      "api.example.com",
      { ports: [80, 443, 8443], subsets: ["v1", "v2"] },
    ],
    ["declared once", "db.example.com", { ports: [5432], subsets: ["v1"] }],
    ["declared by nobody: no service", "ghost.example.com", { ports: [], subsets: [] }],
    ["matched by a wildcard entry only: not judged", "a.wild.org", undefined],
    ["the wildcard host as written is declared", "*.wild.org", { ports: [443], subsets: ["v1"] }],
  ];
  it.each(cases)("%s", (_, h, want) =>
    expect(externalDestination(h, external, (ns) => rules[ns] ?? [])).toEqual(want));

  it("lists what it declares", () => {
    expect([...external.entries()].map(([h, d]) => `${h}:${d.namespaces.join(",")}`).sort()).toEqual([
      "*.wild.org:ext",
      "api.example.com:ext,other",
      "db.example.com:ext",
    ]);
  });
});
