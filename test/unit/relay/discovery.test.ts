import { describe, expect, it } from "vitest";
import {
  chooseVersions,
  type DiscoveryResult,
  groupVersionKey,
  groupVersionsToFetch,
  planDiscovery,
} from "../../../lib/relay/discovery.ts";
import { crdKinds, type KindSpec, watchSpec } from "../../../lib/relay/kinds.ts";

const istio = "networking.istio.io";
const security = "security.istio.io";
const allSecurity = ["peerauthentications", "authorizationpolicies"];
const allIstio = [
  "serviceentries",
  "workloadentries",
  "virtualservices",
  "destinationrules",
  "sidecars",
  "gateways",
];

/**
 * An APIGroupList with apps/v1 and, when given, networking.istio.io at `versions` (preferred first)
 * and security.istio.io at `securityVersions`.
 */
function groupList(versions: string[] | undefined, securityVersions?: string[]): unknown {
  const group = (name: string, vs: string[]) => ({
    name,
    versions: vs.map((version) => ({ groupVersion: `${name}/${version}`, version })),
    preferredVersion: { groupVersion: `${name}/${vs[0]}`, version: vs[0] },
  });
  return {
    kind: "APIGroupList",
    apiVersion: "v1",
    groups: [
      group("apps", ["v1"]),
      ...(versions ? [group(istio, versions)] : []),
      ...(securityVersions ? [group(security, securityVersions)] : []),
    ],
  };
}

/** An APIResourceList of networking.istio.io/<version> (or `group`) naming `resources` (each with its /status). */
function resourceList(version: string, resources: string[], group = istio): unknown {
  return {
    kind: "APIResourceList",
    groupVersion: `${group}/${version}`,
    resources: resources.flatMap((name) => [
      { name, namespaced: true, kind: "X", verbs: ["get", "list", "watch"] },
      { name: `${name}/status`, namespaced: true, kind: "X", verbs: ["get", "patch"] },
    ]),
  };
}

/** Discovery as functions/node/relay/discovery.ts runs it: fetch what /apis says, then choose. */
function discover(
  apis: unknown,
  lists: Record<string, unknown>,
): DiscoveryResult<string[]> & { fetched?: string[] } {
  const gvs = groupVersionsToFetch(apis, crdKinds);
  if (!gvs.ok) return gvs;
  const fetched = gvs.value.map(groupVersionKey);
  const got = new Map(fetched.map((k) => [k, k in lists ? lists[k] : null]));
  const chosen = chooseVersions(crdKinds, got);
  if (!chosen.ok) return chosen;
  return { ok: true, value: chosen.value.map((k) => `${k.kind}@${k.version}`), fetched };
}

/** The networking.istio.io kinds (the security ones are served as a group of their own). */
const networkingKinds = crdKinds.filter((k) => k.group === istio);
/** The Istio kinds, both groups. */
const istioKinds = crdKinds.filter((k) => k.group === istio || k.group === security);
const at = (version: string, kinds = networkingKinds.map((k) => k.kind)) =>
  kinds.map((k) => `${k}@${version}`);

describe("discovery: which version of each Istio kind to watch", () => {
  const cases: {
    name: string;
    apis: unknown;
    lists: Record<string, unknown>;
    want: string[];
    fetched: string[];
  }[] = [
    {
      name: "Istio 1.18-1.21: only v1beta1 and v1alpha3 served ▶ v1beta1",
      apis: groupList(["v1beta1", "v1alpha3"]),
      lists: {
        [`${istio}/v1beta1`]: resourceList("v1beta1", allIstio),
        [`${istio}/v1alpha3`]: resourceList("v1alpha3", allIstio),
      },
      want: at("v1beta1"),
      fetched: [`${istio}/v1beta1`, `${istio}/v1alpha3`],
    },
    {
      name: "v1 only ▶ v1",
      apis: groupList(["v1"]),
      lists: { [`${istio}/v1`]: resourceList("v1", allIstio) },
      want: at("v1"),
      fetched: [`${istio}/v1`],
    },
    {
      name: "all three (Istio 1.22+) ▶ v1, whatever the preferred version says",
      apis: groupList(["v1alpha3", "v1beta1", "v1"]),
      lists: {
        [`${istio}/v1`]: resourceList("v1", allIstio),
        [`${istio}/v1beta1`]: resourceList("v1beta1", allIstio),
        [`${istio}/v1alpha3`]: resourceList("v1alpha3", allIstio),
      },
      want: at("v1"),
      fetched: [`${istio}/v1`, `${istio}/v1beta1`, `${istio}/v1alpha3`],
    },
    {
      name: "a kind missing in v1 but served in v1beta1 ▶ that kind at v1beta1, the others at v1",
      apis: groupList(["v1", "v1beta1"]),
      lists: {
        [`${istio}/v1`]: resourceList(
          "v1",
          allIstio.filter((r) => r !== "workloadentries"),
        ),
        [`${istio}/v1beta1`]: resourceList("v1beta1", allIstio),
      },
      want: networkingKinds.map((k) => `${k.kind}@${k.kind === "WorkloadEntry" ? "v1beta1" : "v1"}`),
      fetched: [`${istio}/v1`, `${istio}/v1beta1`],
    },
    {
      name: "Istio 1.21 with security.istio.io at v1beta1 ▶ every kind at v1beta1, v1alpha3 asked of networking only",
      apis: groupList(["v1beta1", "v1alpha3"], ["v1beta1"]),
      lists: {
        [`${istio}/v1beta1`]: resourceList("v1beta1", allIstio),
        [`${istio}/v1alpha3`]: resourceList("v1alpha3", allIstio),
        [`${security}/v1beta1`]: resourceList("v1beta1", allSecurity, security),
      },
      want: at(
        "v1beta1",
        istioKinds.map((k) => k.kind),
      ),
      fetched: [`${istio}/v1beta1`, `${istio}/v1alpha3`, `${security}/v1beta1`],
    },
    {
      name: "security.istio.io at v1 and v1beta1 (Istio 1.22+) ▶ its kinds at v1",
      apis: groupList(undefined, ["v1", "v1beta1"]),
      lists: {
        [`${security}/v1`]: resourceList("v1", allSecurity, security),
        [`${security}/v1beta1`]: resourceList("v1beta1", allSecurity, security),
      },
      want: ["PeerAuthentication@v1", "AuthorizationPolicy@v1"],
      fetched: [`${security}/v1`, `${security}/v1beta1`],
    },
    {
      name: "some CRDs installed, some not ▶ only those, in table order",
      apis: groupList(["v1"]),
      lists: { [`${istio}/v1`]: resourceList("v1", ["gateways", "serviceentries"]) },
      want: ["ServiceEntry@v1", "Gateway@v1"],
      fetched: [`${istio}/v1`],
    },
    {
      name: "only a subresource named (virtualservices/status) ▶ not served",
      apis: groupList(["v1"]),
      lists: { [`${istio}/v1`]: { resources: [{ name: "virtualservices/status" }] } },
      want: [],
      fetched: [`${istio}/v1`],
    },
    {
      name: "a group version answered 404 between the two GETs ▶ serves nothing, the next one counts",
      apis: groupList(["v1", "v1beta1"]),
      lists: { [`${istio}/v1beta1`]: resourceList("v1beta1", allIstio) },
      want: at("v1beta1"),
      fetched: [`${istio}/v1`, `${istio}/v1beta1`],
    },
    {
      name: "a version the relay does not know (v2) ▶ not fetched",
      apis: groupList(["v2", "v1beta1"]),
      lists: { [`${istio}/v1beta1`]: resourceList("v1beta1", ["sidecars"]) },
      want: ["Sidecar@v1beta1"],
      fetched: [`${istio}/v1beta1`],
    },
    {
      name: "the group absent (Istio not installed) ▶ nothing, nothing fetched",
      apis: groupList(undefined),
      lists: {},
      want: [],
      fetched: [],
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      expect(discover(c.apis, c.lists)).toEqual({ ok: true, value: c.want, fetched: c.fetched });
    });

  const malformed: { name: string; apis: unknown; lists?: Record<string, unknown>; error: RegExp }[] = [
    { name: "/apis is not JSON object", apis: "<html>", error: /GET \/apis: the answer is no APIGroupList/ },
    { name: "/apis has no groups", apis: { kind: "Status" }, error: /no groups array/ },
    { name: "/apis is null", apis: null, error: /no APIGroupList/ },
    {
      name: "the Istio group has no versions list",
      apis: { groups: [{ name: istio, versions: "v1" }] },
      error: /group networking.istio.io has no list of versions/,
    },
    {
      name: "a version entry without a version",
      apis: { groups: [{ name: istio, versions: [{ groupVersion: `${istio}/v1` }] }] },
      error: /has no list of versions/,
    },
    {
      name: "a resource list without resources",
      apis: groupList(["v1"]),
      lists: { [`${istio}/v1`]: { kind: "APIResourceList" } },
      error: /GET \/apis\/networking.istio.io\/v1: the answer is no APIResourceList/,
    },
    {
      name: "a resource list that is an array",
      apis: groupList(["v1"]),
      lists: { [`${istio}/v1`]: [] },
      error: /no APIResourceList/,
    },
  ];
  for (const c of malformed)
    it(`is an error, never "nothing served", when ${c.name}`, () => {
      const got = discover(c.apis, c.lists ?? {});
      expect(got.ok).toBe(false);
      expect(got.ok === false && got.error).toMatch(c.error);
    });

  it("the Gateway API (1.5: v1 and v1beta1) ▶ each kind at the newest version Istio 1.30 reads, ReferenceGrant at v1beta1", () => {
    const gw = "gateway.networking.k8s.io";
    const apis = {
      groups: [
        ...(groupList(["v1"]) as { groups: unknown[] }).groups,
        {
          name: gw,
          versions: ["v1", "v1beta1"].map((version) => ({ groupVersion: `${gw}/${version}`, version })),
        },
      ],
    };
    const both = ["gatewayclasses", "gateways", "httproutes", "referencegrants"];
    const got = discover(apis, {
      [`${istio}/v1`]: resourceList("v1", ["gateways"]),
      [`${gw}/v1`]: resourceList("v1", [...both, "grpcroutes"], gw),
      [`${gw}/v1beta1`]: resourceList("v1beta1", both, gw),
    });
    expect(got).toEqual({
      ok: true,
      value: [
        "Gateway@v1",
        "GatewayClass@v1",
        "KubernetesGateway@v1",
        "HTTPRoute@v1",
        "GRPCRoute@v1",
        "ReferenceGrant@v1beta1",
      ],
      fetched: [`${istio}/v1`, `${gw}/v1`, `${gw}/v1beta1`],
    });
  });

  it("a malformed entry of another group is no concern", () => {
    const apis = {
      groups: [{ name: "apps", versions: null }, ...(groupList(["v1"]) as { groups: unknown[] }).groups],
    };
    expect(discover(apis, { [`${istio}/v1`]: resourceList("v1", ["sidecars"]) })).toMatchObject({
      ok: true,
      value: ["Sidecar@v1"],
    });
  });
});

describe("planDiscovery", () => {
  const spec = (kind: string, version: string): KindSpec =>
    watchSpec(crdKinds.find((d) => d.kind === kind) as (typeof crdKinds)[number], version);
  const names = (ks: KindSpec[]) => ks.map((k) => `${k.kind}@${k.version}`);

  it("starts what is newly served, one line each", () => {
    const p = planDiscovery(
      [spec("Sidecar", "v1")],
      [spec("Sidecar", "v1"), spec("WorkloadEntry", "v1beta1")],
      false,
    );
    expect(names(p.add)).toEqual(["WorkloadEntry@v1beta1"]);
    expect(p.remove).toEqual([]);
    expect(p.move).toEqual([]);
    expect(p.log).toEqual([
      "relay: WorkloadEntry: served at networking.istio.io/v1beta1: listing and watching it",
    ]);
  });

  it("resyncs as empty what is served at no version any more", () => {
    const p = planDiscovery([spec("Gateway", "v1"), spec("Sidecar", "v1")], [spec("Sidecar", "v1")], false);
    expect(names(p.remove)).toEqual(["Gateway@v1"]);
    expect(p.log).toEqual([
      expect.stringMatching(/^relay: Gateway: no longer served .*resyncing it as empty$/),
    ]);
  });

  it("moves a kind whose newest served version changed: up on an upgrade, down when one went away", () => {
    const up = planDiscovery([spec("VirtualService", "v1beta1")], [spec("VirtualService", "v1")], false);
    expect(up.move.map((m) => [m.from.version, m.to.version])).toEqual([["v1beta1", "v1"]]);
    expect(up.add).toEqual([]);
    expect(up.remove).toEqual([]);
    expect(up.log).toEqual([
      "relay: VirtualService: now watched at networking.istio.io/v1 (was v1beta1: a newer version is served); " +
        "relisting and resyncing at the new version",
    ]);
    const down = planDiscovery([spec("VirtualService", "v1")], [spec("VirtualService", "v1alpha3")], false);
    expect(down.log[0]).toMatch(/now watched at networking.istio.io\/v1alpha3 \(was v1: no longer served\)/);
  });

  it("is silent when nothing changed; says once that nothing is served", () => {
    const same = [spec("Sidecar", "v1beta1")];
    expect(planDiscovery(same, same, false)).toEqual({ add: [], remove: [], move: [], log: [] });
    expect(planDiscovery([], [], true).log).toEqual([
      "relay: no Istio CRD is served: watching none until one is installed",
      "relay: no Gateway API CRD is served: watching none until one is installed",
    ]);
    expect(planDiscovery([], [], false).log).toEqual([]);
  });

  it("says so per API: Istio served and the Gateway API not, or the other way round", () => {
    const sidecar = [spec("Sidecar", "v1")];
    expect(planDiscovery([], sidecar, true).log).toEqual([
      "relay: Sidecar: served at networking.istio.io/v1: listing and watching it",
      "relay: no Gateway API CRD is served: watching none until one is installed",
    ]);
    const routes = [spec("HTTPRoute", "v1")];
    expect(planDiscovery(routes, routes, true).log).toEqual([
      "relay: no Istio CRD is served: watching none until one is installed",
    ]);
  });
});
