/**
 * /debug/syncz, /debug/push_status and /debug/networkz on the Worker (workerd, over the real MeshStore): refused
 * without XDS_AUTH credentials before the object is called, answered from the object's own store
 * with ONE call each. The Worker serves no ADS stream, so the proxy record syncz shows is put in the
 * object's store as a stream's recorder writes it (the same proxyRecord builder).
 */
import { runInDurableObject } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { keys } from "../../lib/store/keys.ts";
import { proxyRecord } from "../../lib/xds/proxy-record.ts";
import { endpointSlice, event, pod, service } from "../e2e/support/kube.ts";
import { freezeClock, ingest, mesh, runAlarmsUntilIdle, TypeUrl, worker, xdsAuth } from "./support.ts";

const nodeId = "sidecar~10.0.0.5~reviews-v1.default~default.svc.cluster.local";
const calls = () => runInDurableObject(mesh(), (object) => object.calls);
const port = { name: "grpc", port: 9080 };

beforeAll(async () => {
  const now = freezeClock();
  const r = await ingest([
    event("ADDED", pod("reviews", "default", "10.1.0.1")),
    event("ADDED", service("reviews", "default", [port])),
    event("ADDED", endpointSlice("reviews-1", "reviews", "default", port, [{ ip: "10.1.0.1", ready: true }])),
  ]);
  expect(r.status).toBe(200);
  await runAlarmsUntilIdle();
  const record = proxyRecord(
    {
      nodeId,
      generator: "",
      cluster: "Kubernetes",
      istioVersion: "1.24.0",
      types: [
        {
          typeUrl: TypeUrl.cluster,
          wildcard: true,
          subscribed: [],
          sent: { versionInfo: "v1", nonce: "n1", versions: {} },
          ackedVersion: "v1",
        },
        {
          typeUrl: TypeUrl.endpoint,
          wildcard: false,
          subscribed: ["outbound|9080||reviews.default.svc.cluster.local"],
          sent: { versionInfo: "v2", nonce: "n2", versions: {} },
          nack: { versionInfo: "", nonce: "n2", message: "rejected" },
        },
      ],
    },
    { streamId: "s1", now, connectedAt: now - 1000 },
  );
  await runInDurableObject(mesh(), (object) => object.store.put(keys.proxy(nodeId), record));
});
afterAll(() => {
  vi.useRealTimers();
});

describe("/debug on the Worker", () => {
  it("refuses without credentials, before calling the object", async () => {
    for (const path of ["/debug/syncz", "/debug/push_status", "/debug/networkz"]) {
      const before = await calls();
      const r = await worker(path);
      expect(r.status).toBe(401);
      expect(r.headers.get("www-authenticate")).toMatch(/^Bearer/);
      expect(await calls()).toBe(before);
    }
  });

  it("/debug/syncz answers each proxy's status in one object call", async () => {
    const before = await calls();
    const r = await worker("/debug/syncz", { headers: xdsAuth });
    expect(r.status).toBe(200);
    expect(await calls()).toBe(before + 1);
    expect(r.headers.get("x-edgepilot-instance")).toMatch(/^[0-9a-f-]{36}$/);
    expect(await r.json()).toEqual([
      {
        cluster_id: "Kubernetes",
        proxy: nodeId,
        proxy_type: "sidecar",
        istio_version: "1.24.0",
        cluster_sent: "v1",
        cluster_acked: "v1",
        endpoint_sent: "v2",
        generator: "",
        connected_since: expect.stringMatching(/Z$/),
        updated_at: expect.stringMatching(/Z$/),
        nacks: [{ type_url: TypeUrl.endpoint, nonce: "n2", version_info: "", message: "rejected" }],
      },
    ]);
  });

  it("/debug/push_status answers the push log in one object call", async () => {
    const before = await calls();
    const r = await worker("/debug/push_status?limit=5", { headers: xdsAuth });
    expect(r.status).toBe(200);
    expect(await calls()).toBe(before + 1);
    const status = (await r.json()) as {
      pushVersion: number;
      pushes: { version: number; full: boolean; resourcesChanged: number; resources: { name: string }[] }[];
    };
    expect(status.pushVersion).toBeGreaterThanOrEqual(1);
    expect(status.pushes[0]?.version).toBe(status.pushVersion);
    expect(status.pushes.flatMap((p) => p.resources.map((x) => x.name))).toContain(
      "outbound|9080||reviews.default.svc.cluster.local",
    );
  });

  it("/debug/networkz answers the object's network table in one object call", async () => {
    const before = await calls();
    const r = await worker("/debug/networkz", { headers: xdsAuth });
    expect(r.status).toBe(200);
    expect(await calls()).toBe(before + 1);
    expect(await r.json()).toEqual({ meshNetworksSource: "", networks: [], clusters: [], gateways: [] });
  });

  it("validates the query inside the object as on Node", async () => {
    const r = await worker("/debug/push_status?limit=500", { headers: xdsAuth });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: string }).error).toMatch(/limit must be 1 to 50, got 500/);
  });
});
