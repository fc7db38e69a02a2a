/**
 * Per-namespace views through the real ingest and a real flush (memory store, manual clock): which
 * namespaces get overlays, what the view table records, which markers a push carries, and that a
 * mesh without per-namespace config gets none of it.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { RouteConfigurationSchema } from "../../../lib/gen/envoy/config/route/v3/route_pb.ts";
import type { ResourceChange } from "../../../lib/resources/changes.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { loadViewTable } from "../../../lib/resources/view-store.ts";
import type { ViewTable } from "../../../lib/resources/view-table.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/index.ts";
import { endpointSlice, event as ev, pod, service } from "../../e2e/support/kube.ts";
import { createHarness } from "../ingest/support/harness.ts";
import { destinationRule, virtualService } from "../ingest/support/istio.ts";

const host = "reviews.default.svc.cluster.local";
const port = { name: "grpc", port: 9080 };
const routeName = `${host}:9080`;

/** reviews (default) with a v1 and a v2 pod; ratings in namespace other. */
async function mesh() {
  const h = createHarness();
  const versioned = (ip: string, version: string) => {
    const p = pod("reviews", "default", ip);
    return {
      ...p,
      metadata: { ...p.metadata, labels: { app: "reviews", version } },
    };
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
  );
  await h.settle();
  return h;
}

const subsets = [
  { name: "v1", labels: { version: "v1" } },
  { name: "v2", labels: { version: "v2" } },
];
/** A header route to v2 before the default v1 route, exported as given. */
const byHeader = (exportTo: string[] | undefined, rv: string) =>
  virtualService(
    "reviews",
    {
      ...(exportTo && { exportTo }),
      http: [
        {
          match: [{ headers: { "x-version": { exact: "v2" } } }],
          route: [{ destination: { host: "reviews", subset: "v2" } }],
        },
        { route: [{ destination: { host: "reviews", subset: "v1" } }] },
      ],
    },
    { resourceVersion: rv },
  );

const table = async (h: ReturnType<typeof createHarness>): Promise<ViewTable | undefined> =>
  (await loadViewTable(h.store))?.table;
const routes = (r: StoredResource | undefined) =>
  r && fromBinary(RouteConfigurationSchema, r.body).virtualHosts[0]?.routes.length;
const viewed = (changes: readonly ResourceChange[]) =>
  changes
    .filter((c) => c.view !== undefined)
    .map((c) => `${c.view} ${c.name || "(marker)"} ${c.version === null ? "-" : "+"}`);

describe("per-namespace views, ingest to publish", () => {
  it("without per-namespace config: an empty table written once, no overlay, no marker", async () => {
    const h = await mesh();
    expect(await table(h)).toEqual({ sidecars: [], exports: {}, overlays: {} });
    const written = await h.store.get(keys.viewHead());
    await h.ingest(ev("ADDED", destinationRule("reviews", subsets)), ev("ADDED", byHeader(undefined, "5")));
    const [flush] = await h.settle();
    expect(flush && viewed(flush.changes)).toEqual([]);
    expect((await h.store.get(keys.viewHead()))?.version).toBe(written?.version);
  });

  it('a VirtualService exported to "." is an overlay of its namespace only; public again, the overlay goes', async () => {
    const h = await mesh();
    await h.ingest(ev("ADDED", destinationRule("reviews", subsets)), ev("ADDED", byHeader(["."], "5")));
    const [flush] = await h.settle();
    // Shared: the default route only. The view of default: the header route too, stored once.
    expect(
      routes(
        await h.store.get<StoredResource>(keys.resource(TypeUrl.route, routeName)).then((e) => e?.value),
      ),
    ).toBe(1);
    const overlay = (
      await h.store.get<StoredResource>(keys.viewResource("default", TypeUrl.route, routeName))
    )?.value;
    expect(routes(overlay)).toBe(2);
    expect(flush && viewed(flush.changes)).toEqual([`default ${routeName} +`, "default (marker) -"]);
    expect(Object.keys((await table(h))?.overlays ?? {})).toEqual(["default"]);

    await h.ingest(ev("MODIFIED", byHeader(undefined, "6")));
    const [back] = await h.settle();
    expect(back && viewed(back.changes)).toEqual([`default ${routeName} -`, "default (marker) -"]);
    expect(await h.store.get(keys.viewResource("default", TypeUrl.route, routeName))).toBeUndefined();
    expect((await table(h))?.overlays).toEqual({});
  });

  it('a DestinationRule exported to "." gives its namespace the subset clusters; endpoint pushes update them there', async () => {
    const h = await mesh();
    await h.ingest(ev("ADDED", destinationRule("reviews", subsets, { spec: { exportTo: ["."] } })));
    await h.settle();
    const v2 = `outbound|9080|v2|${host}`;
    expect(await h.store.get(keys.resource(TypeUrl.cluster, v2))).toBeUndefined();
    expect(await h.store.get(keys.viewResource("default", TypeUrl.cluster, v2))).toBeDefined();
    const before = await h.store.get<StoredResource>(keys.viewResource("default", TypeUrl.endpoint, v2));
    const p = pod("reviews", "default", "10.0.0.3");
    await h.ingest(
      ev("ADDED", {
        ...p,
        metadata: { ...p.metadata, labels: { app: "reviews", version: "v2" } },
      }),
      ev(
        "MODIFIED",
        endpointSlice("reviews-1", "reviews", "default", port, [
          { ip: "10.0.0.1", ready: true },
          { ip: "10.0.0.2", ready: true },
          { ip: "10.0.0.3", ready: true },
        ]),
      ),
    );
    const [eds] = await h.settle();
    expect(eds?.request?.full).toBe(false);
    expect(eds && viewed(eds.changes)).toEqual([`default ${v2} +`]);
    const after = await h.store.get<StoredResource>(keys.viewResource("default", TypeUrl.endpoint, v2));
    expect(after?.value.version).not.toBe(before?.value.version);
  });

  it("a public DestinationRule of another namespace for the host is that namespace's overlay only", async () => {
    const h = await mesh();
    await h.ingest(
      ev(
        "ADDED",
        destinationRule("reviews.default.svc.cluster.local", subsets, { namespace: "other", name: "r" }),
      ),
    );
    await h.settle();
    const v1 = `outbound|9080|v1|${host}`;
    // istiod looks in the proxy's own namespace first: proxies of other get the subsets, nobody else.
    expect(await h.store.get(keys.resource(TypeUrl.cluster, v1))).toBeUndefined();
    expect(await h.store.get(keys.viewResource("other", TypeUrl.cluster, v1))).toBeDefined();
    expect(Object.keys((await table(h))?.overlays ?? {})).toEqual(["other"]);
  });

  it('a Sidecar is stored, regenerates no resource, and marks every view ("*"); one with a selector is listed', async () => {
    const h = await mesh();
    const sidecar = (name: string, spec: Record<string, unknown>, rv: string) => ({
      apiVersion: "networking.istio.io/v1",
      kind: "Sidecar",
      metadata: { name, namespace: "other", resourceVersion: rv },
      spec,
    });
    const s = await h.ingest(
      ev("ADDED", sidecar("default", { egress: [{ hosts: ["./*"] }] }, "5")),
      ev(
        "ADDED",
        sidecar("pinned", { workloadSelector: { labels: { app: "x" } }, egress: [{ hosts: ["*/*"] }] }, "6"),
      ),
    );
    expect(s.ignored).toEqual({});
    expect(s.unsupported).toEqual(["Sidecar other/pinned: spec.workloadSelector"]);
    const [flush] = await h.settle();
    expect(flush?.changes.map((c) => `${c.view} ${c.name || "(marker)"}`)).toEqual(["* (marker)"]);
    expect((await table(h))?.sidecars.map((c) => `${c.namespace}/${c.name}`)).toEqual(["other/default"]);
    expect(h.lines).toContain(
      `push: ${JSON.stringify("Sidecar other/pinned: not applied: workloadSelector (per-workload views are not built; Envoy sidecars whose labels match get it)")}`,
    );
    // The same spec again: unchanged, nothing queued.
    expect(
      await h.ingest(ev("MODIFIED", sidecar("default", { egress: [{ hosts: ["./*"] }] }, "7"))),
    ).toMatchObject({
      unchanged: 1,
      push: null,
    });
  });

  it("a service exported to its own namespace is recorded in the table (a predicate, no tombstones)", async () => {
    const h = await mesh();
    const svc = service("ratings", "other", [port]);
    await h.ingest(
      ev("MODIFIED", {
        ...svc,
        metadata: { ...svc.metadata, annotations: { "networking.istio.io/exportTo": "." } },
      }),
    );
    const [flush] = await h.settle();
    expect((await table(h))?.exports).toEqual({ "other/ratings.other.svc.cluster.local": ["."] });
    expect(flush && viewed(flush.changes)).toEqual(["* (marker) -"]);
  });
});
