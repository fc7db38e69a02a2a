/**
 * A Gateway API mesh route (GAMMA) reaches Envoy sidecars as it reaches proxyless clients: an
 * HTTPRoute whose parent is the reviews Service, stored beside the bookinfo mesh, becomes the
 * weighted route of reviews' virtual host in the sidecar's RouteConfiguration `9080` (PGV-valid).
 */
import { fromBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { RouteConfigurationSchema } from "../../../lib/gen/envoy/config/route/v3/route_pb.ts";
import type { ServiceView, StoredResource } from "../../../lib/resources/types.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { createSidecarSnapshots } from "../../../lib/xds/sidecar-snapshots.ts";
import { assertEnvoyValid } from "../../support/xds-check.ts";
import { bookinfoViews, host, NS, PROXY_IP } from "./sidecar/bookinfo.ts";

async function bookinfo() {
  const store = createMemoryStore();
  const put = async (view: ServiceView) => {
    for (const s of view.services) await store.put(keys.service(s.namespace, s.hostname, s.clusterId), s);
    if (view.shards) await store.put(keys.shards(view.namespace, view.hostname), view.shards);
  };
  for (const v of bookinfoViews()) await put(v);
  return store;
}

/** The clusters each route of `hostname`'s virtual host sends to. */
function routesOf(rs: readonly StoredResource[], hostname: string) {
  const rc = rs.find((r) => r.name === "9080");
  if (!rc) return undefined;
  const vh = fromBinary(RouteConfigurationSchema, rc.body).virtualHosts.find((v) =>
    v.domains.includes(hostname),
  );
  return vh?.routes.map((r) => {
    if (r.action.case !== "route") return r.action.case;
    const spec = r.action.value.clusterSpecifier;
    if (spec.case === "cluster") return spec.value;
    if (spec.case === "weightedClusters")
      return spec.value.clusters.map((c) => `${c.name}=${c.weight}`).join(",");
    return "?";
  });
}

describe("mesh routes for Envoy sidecars", () => {
  it("an HTTPRoute with a Service parent is the Service's route in the sidecar's RouteConfiguration", async () => {
    const store = await bookinfo();
    const reviews = host("reviews");
    const node = {
      id: `sidecar~${PROXY_IP}~pp-1.${NS}~${NS}.svc.cluster.local`,
      metadata: { NAMESPACE: NS, CLUSTER_ID: "Kubernetes" },
    };
    const read = async () => {
      const s = createSidecarSnapshots({ store, cache: false });
      const b = s.bind(node, NS);
      if (!b) throw new Error("not bound as a sidecar");
      const rs = await s.resources(b, TypeUrl.route);
      assertEnvoyValid(
        rs.map((r) => ({ typeUrl: r.typeUrl, name: r.name, value: r.body })),
        "sidecar routes",
      );
      return rs;
    };
    expect(routesOf(await read(), reviews)).toEqual([`outbound|9080||${reviews}`]);
    await store.put(keys.config("HTTPRoute", NS, "reviews-split", "Kubernetes"), {
      kind: "HTTPRoute",
      name: "reviews-split",
      namespace: NS,
      clusterId: "Kubernetes",
      resourceVersion: "1",
      labels: {},
      generation: 1,
      spec: {
        parentRefs: [{ group: "", kind: "Service", name: "reviews", port: 9080 }],
        rules: [
          {
            backendRefs: [
              { name: "details", port: 9080, weight: 90 },
              { name: "ratings", port: 9080, weight: 10 },
            ],
          },
        ],
      },
    });
    expect(routesOf(await read(), reviews)).toEqual([
      `outbound|9080||${host("details")}=90,outbound|9080||${host("ratings")}=10`,
    ]);
  });
});
