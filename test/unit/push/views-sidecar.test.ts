/**
 * A Sidecar's import of VirtualServices through the real ingest and a real flush (memory store,
 * manual clock): a VirtualService the Sidecar does not import is an overlay of its namespace only,
 * a Sidecar change alone re-judges it, the services an imported VirtualService routes to join the
 * namespace's predicate (marking that namespace only), and a Sidecar `./*` in a mesh of many routed
 * services stays a predicate with no overlay.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { RouteConfigurationSchema } from "../../../lib/gen/envoy/config/route/v3/route_pb.ts";
import type { ResourceChange } from "../../../lib/resources/changes.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { loadViewTable } from "../../../lib/resources/view-store.ts";
import { resolveView, type ViewTable } from "../../../lib/resources/view-table.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/index.ts";
import { endpointSlice, event as ev, pod, service } from "../../e2e/support/kube.ts";
import { createHarness } from "../ingest/support/harness.ts";
import { destinationRule, virtualService } from "../ingest/support/istio.ts";

const host = "reviews.default.svc.cluster.local";
const port = { name: "grpc", port: 9080 };
const routeName = `${host}:9080`;
const subsets = [
  { name: "v1", labels: { version: "v1" } },
  { name: "v2", labels: { version: "v2" } },
];

/** reviews (default) with v1 and v2 pods and its DestinationRule; ratings in namespace other. */
async function mesh() {
  const h = createHarness();
  const versioned = (ip: string, version: string) => {
    const p = pod("reviews", "default", ip);
    return { ...p, metadata: { ...p.metadata, labels: { app: "reviews", version } } };
  };
  await h.ingest(
    ev("ADDED", service("reviews", "default", [port])),
    ev("ADDED", versioned("10.0.0.1", "v1")),
    ev("ADDED", versioned("10.0.0.2", "v2")),
    ev(
      "ADDED",
      endpointSlice("reviews-1", "reviews", "default", port, [
        { ip: "10.0.0.1", ready: true },
        { ip: "10.0.0.2", ready: true },
      ]),
    ),
    ev("ADDED", service("ratings", "other", [port])),
    ev("ADDED", destinationRule("reviews", subsets)),
  );
  await h.settle();
  return h;
}

const sidecar = (namespace: string, hosts: string[], rv: string) => ({
  apiVersion: "networking.istio.io/v1",
  kind: "Sidecar",
  metadata: { name: "default", namespace, resourceVersion: rv },
  spec: { egress: [{ hosts }] },
});
/** A public VirtualService of namespace routing for reviews: x-version v2 ▶ v2, else ▶ `fallback`. */
const routingVs = (rv: string, fallback: Record<string, unknown> = { host, subset: "v1" }) =>
  virtualService(
    "reviews",
    {
      http: [
        {
          match: [{ headers: { "x-version": { exact: "v2" } } }],
          route: [{ destination: { host, subset: "v2" } }],
        },
        { route: [{ destination: fallback }] },
      ],
    },
    { namespace: "routing", hosts: [host], resourceVersion: rv },
  );

const table = async (h: ReturnType<typeof createHarness>) => (await loadViewTable(h.store))?.table;
const routesIn = async (h: ReturnType<typeof createHarness>, key: string) => {
  const r = (await h.store.get<StoredResource>(key))?.value;
  return r && fromBinary(RouteConfigurationSchema, r.body).virtualHosts[0]?.routes.length;
};
const viewed = (changes: readonly ResourceChange[] | undefined) =>
  (changes ?? [])
    .filter((c) => c.view !== undefined)
    .map((c) => `${c.view} ${c.name || "(marker)"} ${c.version === null ? "-" : "+"}`);

describe("Sidecar import of VirtualServices, ingest to publish", () => {
  it("a VirtualService the Sidecar does not import is an overlay of its namespace; Sidecar changes alone re-judge it", async () => {
    const h = await mesh();
    await h.ingest(ev("ADDED", routingVs("5")));
    await h.settle();
    // Shared: the header route and the default route.
    expect(await routesIn(h, keys.resource(TypeUrl.route, routeName))).toBe(2);

    // edge imports default's services, not namespace routing's VirtualService: reviews as without it.
    await h.ingest(ev("ADDED", sidecar("edge", ["default/*"], "6")));
    const [added] = await h.settle();
    expect(await routesIn(h, keys.viewResource("edge", TypeUrl.route, routeName))).toBe(1);
    expect(viewed(added?.changes)).toEqual([`edge ${routeName} +`, "* (marker) -"]);
    expect(Object.keys((await table(h))?.overlays ?? {})).toEqual(["edge"]);

    // Importing routing/* too: the shared routes apply again, the overlay goes.
    await h.ingest(ev("MODIFIED", sidecar("edge", ["default/*", "routing/*"], "7")));
    const [widened] = await h.settle();
    expect(await h.store.get(keys.viewResource("edge", TypeUrl.route, routeName))).toBeUndefined();
    expect(viewed(widened?.changes)).toEqual([`edge ${routeName} -`, "* (marker) -"]);
    expect((await table(h))?.overlays).toEqual({});

    // Narrowed again, then the Sidecar deleted: the overlay comes and goes with it.
    await h.ingest(ev("MODIFIED", sidecar("edge", ["default/*"], "8")));
    await h.settle();
    expect(await routesIn(h, keys.viewResource("edge", TypeUrl.route, routeName))).toBe(1);
    await h.ingest(ev("DELETED", sidecar("edge", ["default/*"], "9")));
    await h.settle();
    expect(await h.store.get(keys.viewResource("edge", TypeUrl.route, routeName))).toBeUndefined();
    expect(await table(h)).toMatchObject({ sidecars: [], overlays: {} });
    expect((await table(h))?.virtualServices).toBeUndefined();
  });

  it("a namespace whose Sidecar hides the service gets no overlay for it", async () => {
    const h = await mesh();
    await h.ingest(ev("ADDED", sidecar("edge", ["./*"], "5")), ev("ADDED", routingVs("6")));
    await h.settle();
    expect((await table(h))?.overlays).toEqual({});
  });

  it("the services an imported VirtualService routes to join the view, marking that namespace only", async () => {
    const h = await mesh();
    await h.ingest(ev("ADDED", sidecar("via", ["routing/*"], "5")));
    await h.settle();
    const ratings = "other/ratings.other.svc.cluster.local";
    const sees = async (svc: string) =>
      resolveView((await table(h)) as ViewTable, "via", "istio-system").visible?.(svc);
    expect(await sees(`default/${host}`)).toBe(false);

    await h.ingest(ev("ADDED", routingVs("6", { host: "ratings.other.svc.cluster.local" })));
    const [added] = await h.settle();
    expect(viewed(added?.changes)).toEqual(["via (marker) -"]);
    expect(await sees(`default/${host}`)).toBe(true);
    expect(await sees(ratings)).toBe(true);
    expect(await sees("other/details.other.svc.cluster.local")).toBe(false);

    await h.ingest(ev("MODIFIED", routingVs("7")));
    const [narrowed] = await h.settle();
    expect(viewed(narrowed?.changes)).toEqual(["via (marker) -"]);
    expect(await sees(ratings)).toBe(false);
    // An unchanged destination set marks nothing.
    await h.ingest(ev("MODIFIED", { ...routingVs("8"), spec: { ...routingVs("8").spec, exportTo: ["*"] } }));
    const [same] = await h.settle();
    expect(viewed(same?.changes)).toEqual([]);
  });

  it("a Sidecar ./* in a mesh of routed services: a predicate, no overlay", async () => {
    const h = createHarness();
    const events: unknown[] = [];
    for (let i = 0; i < 40; i++) {
      const ns = `ns${i}`;
      events.push(
        ev("ADDED", service("svc", ns, [port])),
        ev(
          "ADDED",
          virtualService(
            "svc",
            { http: [{ route: [{ destination: { host: "svc" } }], timeout: "1s" }] },
            { namespace: ns, resourceVersion: "2" },
          ),
        ),
      );
    }
    await h.ingest(
      ...events,
      ev("ADDED", sidecar("edge", ["./*"], "3")),
      ev("ADDED", sidecar("ns0", ["./*"], "3")),
    );
    await h.settle();
    const t = await table(h);
    expect(t?.overlays).toEqual({});
    expect(t?.virtualServices).toHaveLength(40);
    expect(
      resolveView(t as ViewTable, "edge", "istio-system").visible?.("ns1/svc.ns1.svc.cluster.local"),
    ).toBe(false);
  });
});
