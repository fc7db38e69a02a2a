/**
 * The relay against API servers that serve networking.istio.io at different versions, over real
 * HTTP: Istio 1.18-1.21 (v1beta1 and v1alpha3 only), Istio 1.22+ with v1 only, and CRDs installed
 * while the relay runs, then upgraded to add v1. Every Istio kind, WorkloadEntry included, reaches
 * ingest as lists and watch events carrying the version the relay chose, and every resync names
 * the kinds the relay watches (?watching=).
 */
import { afterEach, describe, expect, it } from "vitest";
import { crdKinds as allCrdKinds } from "../../../lib/relay/kinds.ts";
import { coreKindNames, type Harness, named, startHarness, svc } from "./harness.ts";
import { eventually } from "./receiver.ts";

/** The Istio kinds (the Gateway API's have their own test: gateway-api-kinds.test.ts). */
const crdKinds = allCrdKinds.filter((d) => d.group.endsWith(".istio.io"));

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const istioKindNames = crdKinds.map((d) => d.kind);
const everyKind = [...coreKindNames, ...istioKindNames].join(",");
const networking = "networking.istio.io";
/** The group a kind's events and lists carry (networking.istio.io or security.istio.io). */
const groupOf = (kind: string) => crdKinds.find((d) => d.kind === kind)?.group ?? networking;

/** One object of each Istio kind, named `name` (the receiver only looks at names and apiVersions). */
function applyIstio(api: Harness["api"], name: string): void {
  for (const d of crdKinds) api.apply(d.resource, { metadata: { name, namespace: "default" }, spec: {} });
}

const seed = (api: Harness["api"]) => {
  api.apply("namespaces", named("default"));
  api.apply("nodes", named("node-1"));
  api.apply("services", svc("reviews"));
};

/** Waits until every Istio kind is watched at `version` on the fake. */
async function watchingIstioAt(version: string): Promise<void> {
  await eventually(`every Istio kind watched at ${version}`, () =>
    crdKinds.every((d) =>
      h?.api.requests.some(
        (r) => r.path === `/apis/${d.group}/${version}/${d.resource}` && r.query.watch === "true",
      ),
    ),
  );
  await eventually("the Istio watches open", () =>
    crdKinds.every((d) => (h?.api.openWatches(d.resource) ?? 0) > 0),
  );
}

/** Applies `name` of every Istio kind and checks that each arrives as an event at `version`. */
async function eventsArriveAt(version: string, name: string): Promise<void> {
  const api = h?.api as Harness["api"];
  const rx = h?.rx as Harness["rx"];
  applyIstio(api, name);
  const events = await eventually(`an event of each Istio kind named ${name}`, () => {
    const got = rx.events().filter((e) => e.object.metadata.name === name);
    return got.length === crdKinds.length && got;
  });
  expect(Object.fromEntries(events.map((e) => [e.object.kind, `${e.type} ${e.object.apiVersion}`]))).toEqual(
    Object.fromEntries(istioKindNames.map((k) => [k, `ADDED ${groupOf(k)}/${version}`])),
  );
}

/** The apiVersion and item names of each Istio kind's resyncs, in order. */
function istioResyncs(): Record<string, string[]> {
  return Object.fromEntries(
    istioKindNames.map((k) => [
      k,
      (h?.rx.resyncs(k) ?? []).map(
        (r) => `${r.list.apiVersion} [${r.list.items.map((i) => i.metadata.name).join(",")}]`,
      ),
    ]),
  );
}

/** Each kind's lines, `@` standing for its group. */
const each = (...lines: string[]) =>
  Object.fromEntries(istioKindNames.map((k) => [k, lines.map((l) => l.replace("@", groupOf(k)))]));

describe("Istio CRDs at the versions the cluster serves", () => {
  for (const c of [
    {
      name: "Istio 1.18-1.21: v1beta1 and v1alpha3 only ▶ watched at v1beta1",
      serves: ["v1beta1", "v1alpha3"],
      at: "v1beta1",
    },
    { name: "v1 only ▶ watched at v1", serves: ["v1"], at: "v1" },
  ])
    it(c.name, async () => {
      h = await startHarness({}, (api) => {
        seed(api);
        api.serveCrds(c.serves);
        applyIstio(api, "first");
      });
      await h.synced([...coreKindNames, ...istioKindNames]);
      expect(istioResyncs()).toEqual(each(`@/${c.at} [first]`));
      await watchingIstioAt(c.at);
      await eventsArriveAt(c.at, "second");
      // Discovery settled before the first list: every resync already names every kind watched.
      const resyncs = h.rx.requests.filter((r) => r.path === "/v1/resync");
      expect(resyncs).toHaveLength(coreKindNames.length + istioKindNames.length);
      expect(new Set(resyncs.map((r) => r.watching))).toEqual(new Set([everyKind]));
      expect(h.relay.kinds().sort()).toEqual([...coreKindNames, ...istioKindNames].sort());
      // Nothing asked at a version the cluster does not serve.
      expect(
        h.api.requests
          .filter(
            (r) =>
              r.path.startsWith("/apis/") && r.path.includes(".istio.io/") && !r.path.includes(`/${c.at}`),
          )
          .map((r) => r.path),
      ).toEqual(c.serves.includes("v1alpha3") ? [`/apis/${networking}/v1alpha3`] : []);
    });

  it("CRDs installed after the relay started are found and watched; an upgrade adding v1 moves every kind to v1 without a gap", async () => {
    h = await startHarness({ discoveryIntervalMs: 100 }, seed);
    await h.synced();
    const { api, rx } = h;
    expect(rx.requests.filter((r) => r.path === "/v1/resync").map((r) => r.watching)).toEqual(
      coreKindNames.map(() => coreKindNames.join(",")),
    );
    expect(h.logs).toContain("relay: no Istio CRD is served: watching none until one is installed");

    // An Istio 1.21 install: v1beta1 and v1alpha3.
    api.serveCrds(["v1beta1", "v1alpha3"]);
    applyIstio(api, "first");
    await h.synced([...coreKindNames, ...istioKindNames]);
    expect(istioResyncs()).toEqual(each("@/v1beta1 [first]"));
    for (const k of istioKindNames)
      expect(h.logs).toContain(`relay: ${k}: served at ${groupOf(k)}/v1beta1: listing and watching it`);
    await watchingIstioAt("v1beta1");
    await eventsArriveAt("v1beta1", "second");

    // The upgrade to Istio 1.22: v1 is served too; the v1beta1 watches keep running meanwhile.
    api.serveCrds(["v1", "v1beta1", "v1alpha3"]);
    await eventually("a resync of every Istio kind at v1", () =>
      istioKindNames.every((k) => rx.resyncs(k).some((r) => r.list.apiVersion === `${groupOf(k)}/v1`)),
    );
    // Relisted whole at the new version, never resynced as empty in between: nothing was deleted.
    expect(istioResyncs()).toEqual(each("@/v1beta1 [first]", "@/v1 [first,second]"));
    for (const k of istioKindNames)
      expect(
        h.logs.filter((l) => l.startsWith(`relay: ${k}: now watched at ${groupOf(k)}/v1 (was v1beta1`)),
      ).toHaveLength(1);
    await watchingIstioAt("v1");
    await eventually("the v1beta1 watches closed", () =>
      crdKinds.every((d) => h?.api.openWatches(d.resource) === 1),
    );
    await eventsArriveAt("v1", "third");
    for (const r of rx.requests.filter(
      (x) => x.path === "/v1/resync" && istioKindNames.includes(x.kind ?? ""),
    ))
      expect(r.watching).toBe(everyKind);

    // Uninstalled: every Istio kind resynced as empty, once, at the version it was watched at.
    api.removeCrds();
    await eventually("an empty resync of every Istio kind", () =>
      istioKindNames.every((k) => rx.resyncs(k).at(-1)?.list.items.length === 0),
    );
    expect(istioResyncs().WorkloadEntry?.at(-1)).toBe(`${networking}/v1 []`);
    expect(istioResyncs().AuthorizationPolicy?.at(-1)).toBe("security.istio.io/v1 []");
    expect(h.relay.kinds().sort()).toEqual([...coreKindNames].sort());
    const empties = rx.requests.filter(
      (r) =>
        r.path === "/v1/resync" && r.body.includes('"items":[]') && istioKindNames.includes(r.kind ?? ""),
    );
    // Once per kind, each naming the kinds still watched then: never itself, never a kind of its
    // group (a group's CRDs go together), every core kind (the groups may go in separate rounds).
    expect(empties.map((r) => r.kind).sort()).toEqual([...istioKindNames].sort());
    for (const r of empties) {
      const watching = (r.watching ?? "").split(",");
      expect(
        watching.filter((k) => groupOf(k) === groupOf(r.kind ?? "") && istioKindNames.includes(k)),
      ).toEqual([]);
      expect(watching.slice(0, coreKindNames.length)).toEqual(coreKindNames);
    }
  });
});
