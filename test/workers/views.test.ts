/**
 * Per-namespace views through the Worker on workerd: the view table is stored in parts
 * (lib/resources/view-store.ts) inside the MeshStore, and the Worker's Fetch answers each node through
 * its namespace's view. The Worker hears no pushes, so each call reads the table's small head; the
 * parts are read once per head version, not on every call (counted by the object's entry calls).
 */
import { runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { keys } from "../../lib/store/keys.ts";
import { createSqlStore } from "../../lib/store/sql.ts";
import { endpointSlice, event, service, versionedPod } from "../e2e/support/kube.ts";
import { destinationRule, virtualService } from "../unit/ingest/support/istio.ts";
import { connectJson, freezeClock, ingest, mesh, runAlarmsUntilIdle, TypeUrl } from "./support.ts";

const name = "reviews.default.svc.cluster.local:9080";
const nodeIn = (ns: string) => ({
  id: `sidecar~10.244.9.9~app-1.${ns}~${ns}.svc.cluster.local`,
  cluster: `app.${ns}`,
  metadata: { GENERATOR: "grpc" },
});

/** How many routes the node's namespace is served for `name`. */
async function routesFor(ns: string): Promise<number | undefined> {
  const json = await connectJson("envoy.service.route.v3.RouteDiscoveryService/FetchRoutes", {
    node: nodeIn(ns),
    typeUrl: TypeUrl.route,
    resourceNames: [name],
  });
  const [route] = (json.resources ?? []) as { virtualHosts?: { routes?: unknown[] }[] }[];
  return route?.virtualHosts?.[0]?.routes?.length;
}

const calls = () => runInDurableObject(mesh(), (object) => object.calls);

beforeAll(async () => {
  freezeClock();
  const res = await ingest([
    event("ADDED", service("reviews", "default", [{ name: "grpc", port: 9080 }])),
    event("ADDED", versionedPod("reviews", "default", "10.244.1.1", "v1")),
    event("ADDED", versionedPod("reviews", "default", "10.244.1.2", "v2")),
    event(
      "ADDED",
      endpointSlice("reviews-1", "reviews", "default", { name: "grpc", port: 9080 }, [
        { ip: "10.244.1.1", ready: true },
        { ip: "10.244.1.2", ready: true },
      ]),
    ),
    event(
      "ADDED",
      destinationRule("reviews", [
        { name: "v1", labels: { version: "v1" } },
        { name: "v2", labels: { version: "v2" } },
      ]),
    ),
    event(
      "ADDED",
      virtualService("reviews", {
        exportTo: ["."],
        http: [
          {
            match: [{ headers: { "x-user": { exact: "jason" } } }],
            route: [{ destination: { host: "reviews", subset: "v2" } }],
          },
          { route: [{ destination: { host: "reviews", subset: "v1" } }] },
        ],
      }),
    ),
  ]);
  expect(res.status, await res.text()).toBe(200);
  await runAlarmsUntilIdle();
});

describe("views through the Worker on workerd", () => {
  it("the table is stored as a head and parts, never as one meta/views value", async () => {
    const stored = await runInDurableObject(mesh(), async (_object, state) => {
      const store = createSqlStore(state.storage.sql);
      return {
        head: (await store.get(keys.viewHead())) !== undefined,
        whole: (await store.get(keys.viewTable())) !== undefined,
      };
    });
    expect(stored).toEqual({ head: true, whole: false });
  });

  it("Fetch answers each namespace through its view; parts are read once, then only the head", async () => {
    const first = await calls();
    expect(await routesFor("default")).toBe(2);
    const afterFirst = await calls();
    expect(await routesFor("default")).toBe(2);
    const afterSecond = await calls();
    expect(await routesFor("other")).toBe(1);
    const afterOther = await calls();
    // The first call read the head and the parts; the next ones the head alone (one call fewer).
    expect(afterFirst - first - (afterSecond - afterFirst)).toBe(1);
    expect(afterOther - afterSecond).toBe(afterSecond - afterFirst);
  });

  it("an Envoy sidecar (no GENERATOR) is served sidecar resources, routed as its namespace's view", async () => {
    const sidecarIn = (ns: string) => ({
      id: `sidecar~10.244.9.9~app-1.${ns}~${ns}.svc.cluster.local`,
      metadata: { NAMESPACE: ns },
    });
    const listeners = await connectJson("envoy.service.listener.v3.ListenerDiscoveryService/FetchListeners", {
      node: sidecarIn("default"),
      typeUrl: TypeUrl.listener,
    });
    const names = ((listeners.resources ?? []) as { name?: string }[]).map((l) => l.name);
    expect(names).toEqual(expect.arrayContaining(["0.0.0.0_9080", "virtualInbound", "virtualOutbound"]));
    // RDS `9080`: the VirtualService exported to "." routes default's sidecars by header; other's take the default route.
    for (const [ns, want] of [
      ["default", 2],
      ["other", 1],
    ] as const) {
      const json = await connectJson("envoy.service.route.v3.RouteDiscoveryService/FetchRoutes", {
        node: sidecarIn(ns),
        typeUrl: TypeUrl.route,
        resourceNames: ["9080"],
      });
      const [rc] = (json.resources ?? []) as { virtualHosts?: { name?: string; routes?: unknown[] }[] }[];
      const vh = rc?.virtualHosts?.find((v) => v.name === name);
      expect(vh?.routes?.length, ns).toBe(want);
    }
  });

  it("a DestinationRule change only sidecars reflect moves the push version, and the sidecar's Fetch sees it", async () => {
    const sidecar = { id: "sidecar~10.244.9.9~app-1.default~default.svc.cluster.local", metadata: {} };
    const fetchReviews = async () => {
      const json = await connectJson("envoy.service.cluster.v3.ClusterDiscoveryService/FetchClusters", {
        node: sidecar,
        typeUrl: TypeUrl.cluster,
      });
      const found = ((json.resources ?? []) as { name?: string; transportSocket?: { name?: string } }[]).find(
        (c) => c.name === "outbound|9080||reviews.default.svc.cluster.local",
      );
      return { version: json.versionInfo as string, tls: found?.transportSocket?.name };
    };
    const before = await fetchReviews();
    expect(before.tls).toBeUndefined();
    const version = () =>
      runInDurableObject(mesh(), async (_object, state) => {
        const v = await createSqlStore(state.storage.sql).get<{ version: number }>(keys.pushVersion());
        return v?.value.version ?? 0;
      });
    const pushedBefore = await version();
    // The TLS mode is no field of a proxyless cluster: nothing is published, the push is a refresh.
    const res = await ingest([
      event(
        "MODIFIED",
        destinationRule(
          "reviews",
          [
            { name: "v1", labels: { version: "v1" } },
            { name: "v2", labels: { version: "v2" } },
          ],
          { resourceVersion: "2", spec: { trafficPolicy: { tls: { mode: "ISTIO_MUTUAL" } } } },
        ),
      ),
    ]);
    expect(res.status, await res.text()).toBe(200);
    await runAlarmsUntilIdle();
    expect(await version()).toBeGreaterThan(pushedBefore);
    const after = await fetchReviews();
    expect(after.tls).toBe("envoy.transport_sockets.tls");
    expect(after.version).not.toBe(before.version);
  });
});
