/**
 * VirtualService and DestinationRule through the real ingest and a real flush (memory store,
 * manual clock): published routes, subset clusters and assignments decoded from the stored bytes;
 * needsPush; the push scope; a delete; a route to a host that does not exist.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ClusterSchema } from "../../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import { ClusterLoadAssignmentSchema } from "../../../lib/gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { RouteConfigurationSchema } from "../../../lib/gen/envoy/config/route/v3/route_pb.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/index.ts";
import { endpointSlice, event as ev, pod, service } from "../../e2e/support/kube.ts";
import { createHarness } from "../ingest/support/harness.ts";
import { destinationRule, virtualService } from "../ingest/support/istio.ts";

const host = "reviews.default.svc.cluster.local";
const other = "ratings.default.svc.cluster.local";
const port = { name: "grpc", port: 9080 };

const versioned = (name: string, ip: string, version: string) => {
  const p = pod(name, "default", ip);
  return { ...p, metadata: { ...p.metadata, labels: { app: name, version } } };
};

/** reviews with a v1 pod and a v2 pod, ratings with one pod. */
async function mesh() {
  const h = createHarness();
  await h.ingest(
    ev("ADDED", service("reviews", "default", [port])),
    ev("ADDED", versioned("reviews", "10.0.0.1", "v1")),
    ev("ADDED", versioned("reviews", "10.0.0.2", "v2")),
    ev(
      "ADDED",
      endpointSlice("reviews-1", "reviews", "default", port, [
        { ip: "10.0.0.1", ready: true },
        { ip: "10.0.0.2", ready: true },
      ]),
    ),
    ev("ADDED", service("ratings", "default", [port])),
    ev("ADDED", versioned("ratings", "10.0.1.1", "v1")),
    ev("ADDED", endpointSlice("ratings-1", "ratings", "default", port, [{ ip: "10.0.1.1", ready: true }])),
  );
  await h.settle();
  return h;
}

const subsets = [
  { name: "v1", labels: { version: "v1" } },
  { name: "v2", labels: { version: "v2" } },
];
const weighted = (rv: string, v1 = 80, v2 = 20) =>
  virtualService(
    "reviews",
    {
      http: [
        {
          route: [
            { destination: { host: "reviews", subset: "v1" }, weight: v1 },
            { destination: { host: "reviews", subset: "v2" }, weight: v2 },
          ],
        },
      ],
    },
    { resourceVersion: rv },
  );

async function resource(h: ReturnType<typeof createHarness>, typeUrl: string, name: string) {
  return (await h.store.get<StoredResource>(keys.resource(typeUrl, name)))?.value;
}

async function routeClusters(h: ReturnType<typeof createHarness>, hostname = host) {
  const stored = await resource(h, TypeUrl.route, `${hostname}:9080`);
  if (!stored) return undefined;
  const rc = fromBinary(RouteConfigurationSchema, stored.body);
  return rc.virtualHosts[0]?.routes.map((r) => {
    if (r.action.case !== "route") return "no route";
    const spec = r.action.value.clusterSpecifier;
    if (spec.case === "cluster") return spec.value;
    if (spec.case === "weightedClusters")
      return spec.value.clusters.map((c) => `${c.name}=${c.weight}`).join(",");
    return "?";
  });
}

async function addresses(h: ReturnType<typeof createHarness>, cluster: string) {
  const stored = await resource(h, TypeUrl.endpoint, cluster);
  if (!stored) return undefined;
  const cla = fromBinary(ClusterLoadAssignmentSchema, stored.body);
  return cla.endpoints
    .flatMap((l) => l.lbEndpoints)
    .map((e) =>
      e.hostIdentifier.case === "endpoint" && e.hostIdentifier.value.address?.address.case === "socketAddress"
        ? e.hostIdentifier.value.address.address.value.address
        : "",
    )
    .sort();
}

describe("VirtualService and DestinationRule, ingest to publish", () => {
  it("weighted subsets: weighted clusters in the route, subset clusters and assignments by pod labels", async () => {
    const h = await mesh();
    const s = await h.ingest(
      ev("ADDED", destinationRule("reviews", subsets, { resourceVersion: "50" })),
      ev("ADDED", weighted("51")),
    );
    expect(s).toMatchObject({ applied: 2, unsupported: [], push: { full: true } });
    const [flush] = await h.settle();
    expect(flush?.request?.reasons).toEqual({ config: 2 });
    expect(flush?.request?.configsUpdated).toEqual([
      "DestinationRule/default/reviews",
      `ServiceEntry/default/${host}`,
      "VirtualService/default/reviews",
    ]);
    // Only reviews was regenerated: nothing of ratings changed.
    expect(flush?.changes.some((c) => c.name.includes(other))).toBe(false);
    expect(await routeClusters(h)).toEqual([`outbound|9080|v1|${host}=80,outbound|9080|v2|${host}=20`]);
    for (const [subset, ip] of [
      ["v1", "10.0.0.1"],
      ["v2", "10.0.0.2"],
    ] as const) {
      const name = `outbound|9080|${subset}|${host}`;
      const cluster = await resource(h, TypeUrl.cluster, name);
      expect(cluster && fromBinary(ClusterSchema, cluster.body).name).toBe(name);
      expect(await addresses(h, name)).toEqual([ip]);
    }
    expect(await addresses(h, `outbound|9080||${host}`)).toEqual(["10.0.0.1", "10.0.0.2"]);
    expect(h.lines).toEqual([]);
  });

  it("an endpoint change (an incremental push) keeps the subset assignments, with the new endpoints", async () => {
    const h = await mesh();
    await h.ingest(ev("ADDED", destinationRule("reviews", subsets)), ev("ADDED", weighted("51")));
    await h.settle();
    await h.ingest(
      ev("ADDED", versioned("reviews", "10.0.0.3", "v2")),
      ev(
        "MODIFIED",
        endpointSlice("reviews-1", "reviews", "default", port, [
          { ip: "10.0.0.1", ready: true },
          { ip: "10.0.0.2", ready: true },
          { ip: "10.0.0.3", ready: true },
        ]),
      ),
    );
    const [flush] = await h.settle();
    expect(flush?.request?.full).toBe(false);
    expect(flush?.changes.every((c) => c.version !== null)).toBe(true);
    expect(await addresses(h, `outbound|9080|v2|${host}`)).toEqual(["10.0.0.2", "10.0.0.3"]);
    expect(await addresses(h, `outbound|9080|v1|${host}`)).toEqual(["10.0.0.1"]);
  });

  it("an UPDATE with the same spec is unchanged and queues no push; a changed weight pushes", async () => {
    const h = await mesh();
    await h.ingest(ev("ADDED", destinationRule("reviews", subsets)), ev("ADDED", weighted("51")));
    await h.settle();
    const same = await h.ingest(ev("MODIFIED", weighted("52")));
    expect(same).toMatchObject({ applied: 0, unchanged: 1, push: null });
    expect(await h.settle()).toEqual([]);
    const changed = await h.ingest(ev("MODIFIED", weighted("53", 50, 50)));
    expect(changed).toMatchObject({ applied: 1, push: { full: true } });
    await h.settle();
    expect(await routeClusters(h)).toEqual([`outbound|9080|v1|${host}=50,outbound|9080|v2|${host}=50`]);
  });

  it("a replayed or older event is stale", async () => {
    const h = await mesh();
    await h.ingest(ev("ADDED", weighted("51")));
    const s = await h.ingest(ev("MODIFIED", weighted("40", 10, 90)));
    expect(s).toMatchObject({ stale: 1, push: null });
  });

  it("a DELETE takes the routes back to the default; so does a resync that lacks it", async () => {
    const h = await mesh();
    await h.ingest(ev("ADDED", destinationRule("reviews", subsets)), ev("ADDED", weighted("51")));
    await h.settle();
    const del = await h.ingest(ev("DELETED", weighted("60")));
    expect(del).toMatchObject({ applied: 1, push: { full: true } });
    await h.settle();
    expect(await routeClusters(h)).toEqual([`outbound|9080||${host}`]);

    await h.ingest(ev("ADDED", weighted("61")));
    await h.settle();
    expect((await routeClusters(h))?.[0]).toContain("|v1|");
    const r = await h.resync("VirtualService", [], "70");
    expect(r).toMatchObject({ deleted: 1, push: { full: true } });
    await h.settle();
    expect(await routeClusters(h)).toEqual([`outbound|9080||${host}`]);
  });

  it("a route to a host that does not exist is published, logged once, and other services keep theirs", async () => {
    const h = await mesh();
    const vs = virtualService("reviews", {
      http: [
        { match: [{ headers: { "x-to": { exact: "ghost" } } }], route: [{ destination: { host: "ghost" } }] },
        { route: [{ destination: { host: "reviews" } }] },
      ],
    });
    const dr = destinationRule("ratings", subsets);
    await h.ingest(ev("ADDED", vs), ev("ADDED", dr));
    const [flush] = await h.settle();
    expect(flush?.kind).toBe("done");
    // The route to ghost is answered on the service's own default cluster (its calls fail at once).
    expect(await routeClusters(h)).toEqual([`outbound|9080||${host}`, `outbound|9080||${host}`]);
    expect(h.lines).toHaveLength(1);
    expect(h.lines[0]).toMatch(
      /route "reviews.* names "outbound\|9080\|\|ghost\.default.*no service has host ghost.*UNAVAILABLE at once/,
    );
    expect(await addresses(h, `outbound|9080|v1|${other}`)).toEqual(["10.0.1.1"]);
    expect(await routeClusters(h, other)).toEqual([`outbound|9080||${other}`]);
    // The host appears later, on another port: the routes naming it are regenerated with its port.
    h.lines.length = 0;
    await h.ingest(ev("ADDED", service("ghost", "default", [{ name: "grpc", port: 7070 }])));
    await h.settle();
    expect((await routeClusters(h))?.[0]).toBe("outbound|7070||ghost.default.svc.cluster.local");
    expect(h.lines).toEqual([]);
  });

  it("lists accepted but unimplemented fields once; a namespace-only exportTo is an overlay of its namespace", async () => {
    const h = await mesh();
    const mirrored = virtualService("reviews", {
      http: [{ mirror: { host: "ratings" }, route: [{ destination: { host: "reviews", subset: "v1" } }] }],
    });
    const scoped = destinationRule("reviews", subsets, { spec: { exportTo: ["."] } });
    const s = await h.ingest(ev("ADDED", mirrored), ev("ADDED", scoped));
    expect(s.unsupported).toEqual(["VirtualService default/reviews: spec.http[0].mirror"]);
    await h.settle();
    // Shared: the rule is not public, so no subset cluster, and the route to v1 dangles (logged).
    expect(await resource(h, TypeUrl.cluster, `outbound|9080|v1|${host}`)).toBeUndefined();
    expect(h.lines.some((l) => l.includes(`outbound|9080|v1|${host}`))).toBe(true);
    // The view of namespace default has the subset cluster, stored once as its overlay.
    const overlay = await h.store.get<StoredResource>(
      keys.viewResource("default", TypeUrl.cluster, `outbound|9080|v1|${host}`),
    );
    expect(overlay?.value.service).toBe(`default/${host}`);
  });
});
