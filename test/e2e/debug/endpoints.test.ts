/**
 * The /debug/* paths on a real Node control plane with XDS_AUTH=token: refused without (or with a
 * wrong) token, answered in istiod's shapes with it, every query validated (400 naming the
 * parameter), lists paged through `link: rel="next"`, a refresh push shown as one; and
 * `edgepilot proxy-status` presenting the token from the environment.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { endpointSlice, event, pod, service } from "../support/kube.ts";
import { type RunningControlPlane, startControlPlane } from "../support/runtime.ts";

const token = "debug-endpoints-token-0001";
const port = { name: "grpc", port: 9080 };
const bin = fileURLToPath(new URL("../../../bin/edgepilot.mjs", import.meta.url));
const paths = [
  "/debug/syncz",
  "/debug/configz",
  "/debug/registryz",
  "/debug/endpointShardz",
  "/debug/networkz",
  "/debug/push_status",
  "/debug/config_dump?proxyID=x",
  "/debug/mesh",
  "/debug/list",
];
let cp: RunningControlPlane;
const get = (path: string, t: string | null = token) =>
  fetch(
    `http://127.0.0.1:${cp.port}${path}`,
    t === null ? {} : { headers: { authorization: `Bearer ${t}` } },
  );

const destinationRule = {
  apiVersion: "networking.istio.io/v1",
  kind: "DestinationRule",
  metadata: { name: "reviews", namespace: "default", resourceVersion: "7" },
  spec: { host: "reviews.default.svc.cluster.local", subsets: [{ name: "v1", labels: { version: "v1" } }] },
};

beforeAll(async () => {
  cp = await startControlPlane({
    XDS_AUTH: "token",
    EDGEPILOT_XDS_TOKEN: token,
    PILOT_DEBOUNCE_AFTER: "5ms",
  });
  const r = await cp.post([
    event("ADDED", pod("reviews", "default", "10.1.0.1")),
    event("ADDED", service("reviews", "default", [port])),
    event("ADDED", service("ratings", "default", [port])),
    event("ADDED", endpointSlice("reviews-1", "reviews", "default", port, [{ ip: "10.1.0.1", ready: true }])),
    event("ADDED", destinationRule),
  ]);
  expect(r.status).toBe(200);
  for (let i = 0; i < 100; i++) {
    const s = (await (await get("/debug/push_status")).json()) as { pushVersion: number };
    if (s.pushVersion >= 1) break;
    await new Promise((res) => setTimeout(res, 20));
  }
}, 30_000);
afterAll(async () => {
  await cp?.stop();
});

describe("/debug/* with XDS_AUTH=token", () => {
  it("refuses every path without the token, or with a wrong one", async () => {
    for (const path of paths) {
      for (const t of [null, "wrong-token-wrong-token"]) {
        const r = await get(path, t);
        expect(r.status, `${path} with ${t}`).toBe(401);
        expect(r.headers.get("www-authenticate")).toMatch(/^Bearer/);
        expect(((await r.json()) as { error: string }).error).not.toContain(token);
      }
    }
  });

  it("answers in istiod's shapes with it", async () => {
    expect(await (await get("/debug/syncz")).json()).toEqual([]);
    const configs = (await (await get("/debug/configz")).json()) as {
      kind: string;
      metadata: { name: string };
    }[];
    expect(configs.map((c) => [c.kind, c.metadata.name])).toEqual([["DestinationRule", "reviews"]]);
    const services = (await (await get("/debug/registryz")).json()) as {
      hostname: string;
      Attributes: { ServiceRegistry: string };
      ports: { port: number }[];
    }[];
    expect(services.map((s) => s.hostname)).toEqual([
      "ratings.default.svc.cluster.local",
      "reviews.default.svc.cluster.local",
    ]);
    expect(services[1]?.Attributes.ServiceRegistry).toBe("Kubernetes");
    const shardz = (await (await get("/debug/endpointShardz")).json()) as Record<
      string,
      Record<string, { Shards: Record<string, { Address: string; EndpointPort: number }[]> }>
    >;
    const shards = shardz["reviews.default.svc.cluster.local"]?.default?.Shards ?? {};
    expect(Object.values(shards).flat()).toMatchObject([{ Address: "10.1.0.1", EndpointPort: 9080 }]);
    expect(await (await get("/debug/networkz")).json()).toEqual({
      meshNetworksSource: "",
      networks: [],
      clusters: [],
      gateways: [],
    });
    const status = (await (await get("/debug/push_status")).json()) as {
      pushVersion: number;
      pushes: { version: number; full: boolean; reason: Record<string, number>; resourcesChanged: number }[];
    };
    expect(status.pushes[0]?.version).toBe(status.pushVersion);
    expect(status.pushes[0]?.full).toBe(true);
    expect(status.pushes[0]?.resourcesChanged).toBeGreaterThan(0);
    expect(Object.keys(status.pushes[0]?.reason ?? {}).length).toBeGreaterThan(0);
  });

  it("pages a list through link: rel=next", async () => {
    const first = await get("/debug/registryz?limit=1");
    const link = /<([^>]+)>; rel="next"/.exec(first.headers.get("link") ?? "")?.[1];
    expect((await first.json()) as unknown[]).toHaveLength(1);
    expect(link).toMatch(/^\/debug\/registryz\?limit=1&cursor=/);
    const second = await get(link ?? "");
    expect(((await second.json()) as { hostname: string }[]).map((s) => s.hostname)).toEqual([
      "reviews.default.svc.cluster.local",
    ]);
    expect(second.headers.get("link")).toBeNull();
  });

  it.each([
    ["/debug/syncz?limit=0", /limit must be 1 to 1000, got 0/],
    ["/debug/syncz?limit=abc", /limit must be a whole number/],
    ["/debug/syncz?limit=1&limit=2", /limit is given 2 times/],
    [
      "/debug/syncz?bogus=1",
      /unknown query parameter "bogus"; this path takes pretty, limit, cursor, proxyID/,
    ],
    ["/debug/registryz?cursor=shard%2Fx", /cursor is not one this path returned/],
    ["/debug/configz?namespace=default", /namespace needs kind/],
    ["/debug/configz?kind=EnvoyFilter", /kind must be one of ServiceEntry, WorkloadEntry/],
    ["/debug/endpointShardz?hostname=a", /hostname needs namespace/],
    ["/debug/push_status?before=0", /before must be at least 1/],
    ["/debug/config_dump", /proxyID is required/],
    [`/debug/config_dump?proxyID=${"x".repeat(1025)}`, /proxyID is 1025 characters/],
    [
      "/debug/config_dump?proxyID=a%01b",
      /proxyID has a control character or lone surrogate \(U\+0001\) at index 1/,
    ],
  ])("%s answers 400", async (path, message) => {
    const r = await get(path);
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: string }).error).toMatch(message);
  });

  it("edgepilot proxy-status presents EDGEPILOT_XDS_TOKEN, and says what to do without it", async () => {
    const run = (env: Record<string, string>) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(
          process.execPath,
          [bin, "proxy-status", "--url", `http://127.0.0.1:${cp.port}`],
          { env: { ...process.env, EDGEPILOT_XDS_TOKEN: "", ...env } },
          (err, stdout, stderr) =>
            resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        );
      });
    const refused = await run({});
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/401 .*\(pass --token-file or set EDGEPILOT_XDS_TOKEN\)/);
    const ok = await run({ EDGEPILOT_XDS_TOKEN: token });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^NAME\s+CLUSTER\s+CDS\s+LDS\s+EDS\s+RDS\s+ISTIOD\s+VERSION\n$/);
  }, 15_000);

  it("push_status says a push that changed only sidecar resources was a refresh", async () => {
    type Status = {
      pushVersion: number;
      pushes: { full: boolean; refresh?: true; resourcesChanged: number }[];
    };
    const before = ((await (await get("/debug/push_status")).json()) as Status).pushVersion;
    expect(before).toBeGreaterThan(0);
    // SIMPLE TLS is no field of anything published (grpcgen ignores it): only sidecar clusters change.
    const tls = { ...destinationRule, metadata: { ...destinationRule.metadata, resourceVersion: "8" } };
    const r = await cp.post([
      event("MODIFIED", { ...tls, spec: { ...tls.spec, trafficPolicy: { tls: { mode: "SIMPLE" } } } }),
    ]);
    expect(r.status).toBe(200);
    let status: Status | undefined;
    for (let i = 0; i < 100; i++) {
      status = (await (await get("/debug/push_status?limit=1")).json()) as Status;
      if (status.pushVersion > before) break;
      await new Promise((res) => setTimeout(res, 20));
    }
    expect(status?.pushVersion).toBe(before + 1);
    expect(status?.pushes).toMatchObject([{ full: true, refresh: true, resourcesChanged: 0 }]);
  });

  it("/debug/mesh shows the stored mesh records: null until the istio ConfigMap arrives, then its model, unsupported fields and source", async () => {
    expect(await (await get("/debug/mesh")).json()).toEqual({ meshConfig: null, meshNetworks: null });
    const configMap = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "istio", namespace: "istio-system", resourceVersion: "31" },
      data: {
        mesh: "trustDomain: example.org\nenableTracing: true\n",
        meshNetworks: "networks:\n  west:\n    endpoints:\n    - fromCidr: 10.1.0.0/16\n",
      },
    };
    expect((await cp.post([event("ADDED", configMap)])).status).toBe(200);
    expect(await (await get("/debug/mesh")).json()).toEqual({
      meshConfig: {
        model: { trustDomain: "example.org" },
        unsupported: ["enableTracing"],
        source: "configmap:Kubernetes/istio-system/istio@31",
      },
      meshNetworks: {
        model: { networks: { west: { endpoints: [{ fromCidr: "10.1.0.0/16" }], gateways: [] } } },
        source: "configmap:Kubernetes/istio-system/istio@31",
      },
    });
  });
});
