/**
 * Dangling routes outside Kubernetes through the real ingest and a real flush (memory store,
 * manual clock): a VirtualService of a ServiceEntry host routing to another entry's missing subset,
 * to a host no entry declares, and to an entry deleted later. The published RouteConfiguration
 * answers exactly those routes with the 100% UNAVAILABLE abort on the default cluster, the others
 * route as configured, and the deletion regenerates the routing host's routes (the push scope
 * follows VirtualService destinations, not only hosts).
 */
import { fromBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { RouteConfigurationSchema } from "../../../lib/gen/envoy/config/route/v3/route_pb.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/index.ts";
import { event as ev, service } from "../../e2e/support/kube.ts";
import { createHarness } from "../ingest/support/harness.ts";
import { destinationRule, serviceEntry, virtualService } from "../ingest/support/istio.ts";

const FRONT = "front.example.com";
const own = `outbound|9080||${FRONT}`;

/** Per route of `<host>:9080`: `abort <cluster>` when it carries the fault override, else its cluster(s). */
async function routes(h: ReturnType<typeof createHarness>, host = FRONT, view?: string): Promise<string[]> {
  const key =
    view === undefined
      ? keys.resource(TypeUrl.route, `${host}:9080`)
      : keys.viewResource(view, TypeUrl.route, `${host}:9080`);
  const stored = await h.store.get<StoredResource>(key);
  if (!stored) throw new Error(`no route ${host}:9080 ${view ?? ""}`);
  const rc = fromBinary(RouteConfigurationSchema, stored.value.body);
  return (rc.virtualHosts[0]?.routes ?? []).map((r) => {
    if (r.action.case !== "route") return "other";
    const spec = r.action.value.clusterSpecifier;
    const names =
      spec.case === "cluster"
        ? [spec.value]
        : spec.case === "weightedClusters"
          ? spec.value.clusters.map((c) => c.name)
          : [];
    const fault = Object.keys(r.typedPerFilterConfig).length > 0;
    return `${fault ? "abort " : ""}${names.join(",")}`;
  });
}

const entry = (name: string, namespace = "default", rv = "1") =>
  serviceEntry(
    name,
    { endpoints: [{ address: "10.1.0.1", labels: { version: "v1" } }] },
    { namespace, resourceVersion: rv },
  );
const to = (host: string, subset?: string) => ({
  route: [{ destination: { host, ...(subset && { subset }) } }],
  match: [{ headers: { "x-to": { exact: `${host}/${subset ?? ""}` } } }],
});

describe("flush: dangling routes to ServiceEntry hosts", () => {
  it("a missing subset or host is the abort, the rest is routed; a destination deleted later becomes the abort", async () => {
    const h = createHarness();
    await h.ingest(
      ev("ADDED", entry("front")),
      ev("ADDED", entry("api", "ext")),
      ev("ADDED", entry("gone", "ext")),
      ev("ADDED", service("reviews", "default", [{ name: "grpc", port: 9080 }])),
      ev(
        "ADDED",
        destinationRule("api.example.com", [{ name: "v1", labels: { version: "v1" } }], {
          namespace: "ext",
          name: "api",
        }),
      ),
      ev(
        "ADDED",
        virtualService(
          "front",
          {
            http: [
              to("api.example.com", "v9"),
              to("ghost.example.com"),
              to("api.example.com", "v1"),
              to("gone.example.com"),
              to("reviews"),
              { route: [{ destination: { host: FRONT } }] },
            ],
          },
          { hosts: [FRONT] },
        ),
      ),
    );
    await h.settle();
    const routed = [
      `abort ${own}`,
      `abort ${own}`,
      "outbound|9080|v1|api.example.com",
      "outbound|9080||gone.example.com",
      "outbound|9080||reviews.default.svc.cluster.local",
      own,
    ];
    expect(await routes(h)).toEqual(routed);
    const steps: { name: string; events: unknown[]; want: string[] }[] = [
      {
        name: "the ServiceEntry a route names deleted",
        events: [ev("DELETED", entry("gone", "ext", "2"))],
        want: routed.map((r, i) => (i === 3 ? `abort ${own}` : r)),
      },
      {
        name: "the Kubernetes Service a route names deleted",
        events: [ev("DELETED", service("reviews", "default", [{ name: "grpc", port: 9080 }]))],
        want: routed.map((r, i) => (i === 3 || i === 4 ? `abort ${own}` : r)),
      },
      {
        name: "the entry back: routed to it again",
        events: [ev("ADDED", entry("gone", "ext", "3"))],
        want: routed.map((r, i) => (i === 4 ? `abort ${own}` : r)),
      },
    ];
    for (const step of steps) {
      await h.ingest(...step.events);
      await h.settle();
      expect(await routes(h), step.name).toEqual(step.want);
    }
  });

  it("a VirtualService exported to its own namespace only: that view's overlay answers the missing subset with the abort", async () => {
    const h = createHarness();
    await h.ingest(
      ev("ADDED", entry("front")),
      ev("ADDED", entry("api", "ext")),
      ev(
        "ADDED",
        destinationRule("api.example.com", [{ name: "v1", labels: { version: "v1" } }], {
          namespace: "ext",
          name: "api",
        }),
      ),
      ev(
        "ADDED",
        virtualService(
          "front",
          { exportTo: ["."], http: [to("api.example.com", "v9"), to("api.example.com", "v1")] },
          { hosts: [FRONT] },
        ),
      ),
    );
    await h.settle();
    // The shared route knows nothing of the VirtualService; the namespace's own view routes by it.
    expect(await routes(h)).toEqual([own]);
    expect(await routes(h, FRONT, "default")).toEqual([`abort ${own}`, "outbound|9080|v1|api.example.com"]);
  });
});
