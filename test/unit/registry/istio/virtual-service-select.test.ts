import { describe, expect, it } from "vitest";
import { toSidecar } from "../../../../lib/registry/istio/sidecar.ts";
import {
  toVirtualService,
  type VirtualServiceModel,
} from "../../../../lib/registry/istio/virtual-service.ts";
import {
  createVirtualServiceHostIndex,
  destinationHosts,
  importedDestinations,
  toVirtualServiceImport,
  virtualServicesFor,
} from "../../../../lib/registry/istio/virtual-service-select.ts";
import { virtualService } from "./builders.ts";

let seq = 0;
function vs(namespace: string, name: string, spec: Record<string, unknown> = {}): VirtualServiceModel {
  const created = new Date(Date.UTC(2026, 0, 1, 0, 0, seq++)).toISOString();
  return toVirtualService(
    { name, namespace, creationTimestamp: created },
    virtualService({ hosts: ["reviews.prod.svc.cluster.local"], ...spec }).spec,
    "cluster.local",
  );
}
const names = (l: VirtualServiceModel[]) => l.map((v) => `${v.namespace}/${v.name}`);
const reviews = "reviews.prod.svc.cluster.local";

describe("virtualServicesFor (virtualServiceIndex order)", () => {
  it("private, then exported to the namespace, then public; each oldest first", () => {
    const all = [
      vs("prod", "public-old"),
      vs("web", "exported", { exportTo: ["client"] }),
      vs("client", "private", { exportTo: ["."] }),
      vs("prod", "public-new", { exportTo: ["*"] }),
      vs("prod", "elsewhere", { exportTo: ["other"] }),
      vs("prod", "nowhere", { exportTo: ["~"] }),
      vs("prod", "gateway-only", { gateways: ["istio-system/ingress"] }),
      vs("prod", "delegate", { hosts: [] }),
    ];
    expect(names(virtualServicesFor(all, "client"))).toEqual([
      "client/private",
      "web/exported",
      "prod/public-old",
      "prod/public-new",
    ]);
  });

  it("a Sidecar keeps only the VirtualServices its egress hosts import", () => {
    const all = [vs("prod", "a"), vs("web", "b")];
    const sc = toSidecar({ name: "s", namespace: "client" }, { egress: [{ hosts: ["prod/*"] }] });
    expect(names(virtualServicesFor(all, "client", sc))).toEqual(["prod/a"]);
  });
});

describe("createVirtualServiceHostIndex: the VirtualService a host gets", () => {
  it.each([
    ["the first exact host in order wins", () => [vs("a", "first"), vs("a", "second")], reviews, "a/first"],
    [
      "an exact host beats a wildcard",
      () => [vs("a", "wild", { hosts: ["*.prod.svc.cluster.local"] }), vs("a", "exact")],
      reviews,
      "a/exact",
    ],
    [
      "the most specific wildcard wins",
      () => [
        vs("a", "broad", { hosts: ["*.cluster.local"] }),
        vs("a", "narrow", { hosts: ["*.prod.svc.cluster.local"] }),
      ],
      reviews,
      "a/narrow",
    ],
    [
      "a short host resolves in the VirtualService's namespace",
      () => [vs("prod", "short", { hosts: ["reviews"] })],
      reviews,
      "prod/short",
    ],
    [
      "a short host in another namespace does not match",
      () => [vs("web", "short", { hosts: ["reviews"] })],
      reviews,
      undefined,
    ],
    ["no VirtualService", () => [], reviews, undefined],
  ])("%s", (_, list, host, want) => {
    const got = createVirtualServiceHostIndex(list()).forHost(host);
    expect(got ? `${got.namespace}/${got.name}` : undefined).toBe(want);
  });
});

describe("destinationHosts", () => {
  it("lists the hosts routes send to, sorted and unique", () => {
    const a = vs("prod", "a", {
      http: [
        {
          route: [
            { destination: { host: "ratings" }, weight: 1 },
            { destination: { host: "details" }, weight: 1 },
          ],
        },
      ],
    });
    const b = vs("web", "b", {
      http: [
        { route: [{ destination: { host: "ratings.prod.svc.cluster.local" } }] },
        { redirect: { uri: "/" } },
      ],
    });
    expect(destinationHosts([a, b])).toEqual([
      "details.prod.svc.cluster.local",
      "ratings.prod.svc.cluster.local",
    ]);
  });
});

describe("Sidecar import of VirtualServices (SelectVirtualServices) and of their destinations", () => {
  const egress = (hosts: string[]) => toSidecar({ name: "s", namespace: "client" }, { egress: [{ hosts }] });
  /** reviews.prod ▶ ratings.prod; `spec` replaces fields (hosts, exportTo, http). */
  const routing = (namespace: string, spec: Record<string, unknown> = {}) =>
    vs(namespace, "r", {
      http: [{ route: [{ destination: { host: "ratings.prod.svc.cluster.local" } }] }],
      ...spec,
    });
  const ratings = "ratings.prod.svc.cluster.local";
  const cases: { name: string; vs: VirtualServiceModel; hosts: string[]; imported: boolean }[] = [
    {
      name: "ns/* of the VirtualService's namespace",
      vs: routing("prod"),
      hosts: ["prod/*"],
      imported: true,
    },
    { name: "*/* imports every namespace's", vs: routing("web"), hosts: ["*/*"], imported: true },
    { name: "another namespace's ns/* does not", vs: routing("web"), hosts: ["prod/*"], imported: false },
    { name: '"." names the proxy namespace', vs: routing("client"), hosts: ["./*"], imported: true },
    { name: '"." is not the VirtualService namespace', vs: routing("prod"), hosts: ["./*"], imported: false },
    {
      name: "*/<host> names its host in any namespace",
      vs: routing("web"),
      hosts: [`*/${reviews}`],
      imported: true,
    },
    {
      name: "ns/<other host> does not",
      vs: routing("prod"),
      hosts: ["prod/details.prod.svc.cluster.local"],
      imported: false,
    },
    {
      name: "a wildcard VirtualService host overlapping an exact egress host (Matches both ways)",
      vs: routing("prod", { hosts: ["*.prod.svc.cluster.local"] }),
      hosts: [`prod/${reviews}`],
      imported: true,
    },
    {
      name: "a wildcard egress host covering the VirtualService's host",
      vs: routing("prod"),
      hosts: ["prod/*.prod.svc.cluster.local"],
      imported: true,
    },
    { name: '"~/*" imports nothing', vs: routing("prod"), hosts: ["~/*"], imported: false },
    {
      name: "the egress hosts cannot widen exportTo",
      vs: routing("prod", { exportTo: ["."] }),
      hosts: ["*/*"],
      imported: false,
    },
    {
      name: "exported to the proxy's namespace",
      vs: routing("prod", { exportTo: ["client"] }),
      hosts: ["prod/*"],
      imported: true,
    },
  ];
  it.each(cases)("$name", ({ vs: v, hosts, imported }) => {
    const sc = egress(hosts);
    expect(names(virtualServicesFor([v], "client", sc)), "the VirtualService").toEqual(
      imported ? [`${v.namespace}/r`] : [],
    );
    const record = toVirtualServiceImport(v);
    expect([...importedDestinations(record ? [record] : [], sc, "client")], "its destinations").toEqual(
      imported ? [ratings] : [],
    );
  });

  it.each([
    ["a gateway-only VirtualService", { gateways: ["istio-system/ingress"] }],
    ["a delegate (no hosts)", { hosts: [] }],
    ["one that only redirects", { http: [{ redirect: { uri: "/" } }] }],
  ])("%s imports no destination", (_, spec) =>
    expect(toVirtualServiceImport(routing("prod", spec))).toBeUndefined());

  it("the record keeps what the decision needs: namespace, hosts, exportTo unless public, destinations", () => {
    expect(toVirtualServiceImport(routing("prod", { exportTo: ["*"] }))).toEqual({
      namespace: "prod",
      hosts: [reviews],
      destinations: [ratings],
    });
    expect(toVirtualServiceImport(routing("prod", { exportTo: [".", "client"] }))?.exportTo).toEqual([
      ".",
      "client",
    ]);
  });
});
