/**
 * /debug/authorizationz and /debug/configz?mtls on a real Node control plane: security policies
 * posted as the relay sends them, one proxy on a real gRPC ADS stream, then the policies that apply
 * to it (by action) and its effective mTLS; every pod's mode; a proxy not connected is 404.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AdsStream, openAds } from "../support/ads-client.ts";
import { endpointSlice, event, pod, podName, service } from "../support/kube.ts";
import { type RunningControlPlane, startControlPlane } from "../support/runtime.ts";

const CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
const port = { name: "grpc", port: 9080 };
const node = {
  id: `sidecar~10.1.0.1~${podName("reviews", "10.1.0.1")}.default~default.svc.cluster.local`,
  metadata: { CLUSTER_ID: "Kubernetes" },
};
const security = (kind: string, namespace: string, name: string, spec: unknown) => ({
  apiVersion: "security.istio.io/v1",
  kind,
  metadata: { name, namespace, resourceVersion: "1", creationTimestamp: "2026-01-01T00:00:00Z" },
  spec,
});

let cp: RunningControlPlane;
let ads: AdsStream | undefined;
const get = (path: string) => fetch(`http://127.0.0.1:${cp.port}${path}`);

beforeAll(async () => {
  cp = await startControlPlane({ PILOT_DEBOUNCE_AFTER: "5ms" });
  const r = await cp.post([
    event("ADDED", pod("reviews", "default", "10.1.0.1")),
    event("ADDED", service("reviews", "default", [port])),
    event("ADDED", endpointSlice("reviews-1", "reviews", "default", port, [{ ip: "10.1.0.1", ready: true }])),
    event("ADDED", security("PeerAuthentication", "istio-system", "default", { mtls: { mode: "STRICT" } })),
    event(
      "ADDED",
      security("AuthorizationPolicy", "default", "deny-admin", {
        selector: { matchLabels: { app: "reviews" } },
        action: "DENY",
        rules: [{ to: [{ operation: { ports: ["9080"], paths: ["/admin"] } }] }],
      }),
    ),
    event(
      "ADDED",
      security("AuthorizationPolicy", "default", "allow-ratings", {
        selector: { matchLabels: { app: "ratings" } },
      }),
    ),
  ]);
  expect(r.status).toBe(200);
  expect(((await r.json()) as { applied: number }).applied).toBe(6);
  ads = openAds(cp.xdsPort);
  ads.send({ node, typeUrl: CDS });
  const c = await ads.next();
  ads.send({ typeUrl: CDS, versionInfo: c?.versionInfo ?? "", responseNonce: c?.nonce ?? "" });
  // The status record is written after the ACK: wait until the proxy is listed.
  for (let i = 0; i < 100; i++) {
    const rows = (await (await get("/debug/syncz")).json()) as unknown[];
    if (rows.length === 1) break;
    await new Promise((res) => setTimeout(res, 50));
  }
}, 30_000);
afterAll(async () => {
  ads?.close();
  await cp?.stop();
});

describe("/debug/authorizationz", () => {
  it("answers the policies that apply to a connected proxy, by action, and its effective mTLS", async () => {
    const r = await get(`/debug/authorizationz?proxyID=${encodeURIComponent(node.id)}`);
    expect(r.status).toBe(200);
    const body = (await r.json()) as {
      workload: unknown;
      mtls: unknown;
      root_namespace: string;
      authorization_policies: Record<string, { name: string; action: string }[]>;
    };
    expect(body.workload).toEqual({
      namespace: "default",
      labels: { app: "reviews", version: "v1" },
      pod: `default/${podName("reviews", "10.1.0.1")}`,
      cluster: "Kubernetes",
    });
    expect(body.mtls).toEqual({ mode: "STRICT" });
    expect(body.root_namespace).toBe("istio-system");
    expect(body.authorization_policies.deny?.map((p) => [p.name, p.action])).toEqual([
      ["deny-admin", "DENY"],
    ]);
    expect(body.authorization_policies.allow).toEqual([]);
  });

  it("answers 404 for a proxy that is not connected, 400 without proxyID", async () => {
    const missing = await get(
      "/debug/authorizationz?proxyID=sidecar~10.9.9.9~x.default~default.svc.cluster.local",
    );
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: string }).error).toMatch(/no live status record/);
    const none = await get("/debug/authorizationz");
    expect(none.status).toBe(400);
    expect(((await none.json()) as { error: string }).error).toMatch(/proxyID is required/);
  });

  it("/debug/configz lists the policies at their group, and ?mtls every pod's mode", async () => {
    const configs = (await (await get("/debug/configz?kind=PeerAuthentication")).json()) as {
      apiVersion: string;
      metadata: { name: string };
    }[];
    expect(configs.map((c) => [c.apiVersion, c.metadata.name])).toEqual([
      ["security.istio.io/v1", "default"],
    ]);
    const pods = (await (await get("/debug/configz?mtls")).json()) as unknown[];
    expect(pods).toEqual([
      {
        cluster: "Kubernetes",
        namespace: "default",
        name: podName("reviews", "10.1.0.1"),
        mtls: { mode: "STRICT" },
      },
    ]);
  });
});
