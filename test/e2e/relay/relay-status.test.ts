/**
 * `edgepilot relay` as a process writing the Gateway API statuses back: against the fake API
 * server (its status subresource records every PUT) and a real HTTP server answering
 * /v1/gateway-status in the control plane's shape (ETag, 304), the relay writes each status once,
 * keeps another controller's route parent, retries a 409 at the next round, and writes nothing
 * again while nothing changed, however many rounds the interval and delivered batches run.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import type { GatewayApiStatus } from "../../../lib/registry/gateway-api/gateway-status.ts";
import { type FakeApiServer, startFakeApiServer } from "./fake-apiserver.ts";
import { named, svc } from "./harness.ts";
import { eventually } from "./receiver.ts";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

const token = "status-token";
const group = "gateway.networking.k8s.io";
const controller = "istio.io/gateway-controller";

/** A stand-in for the control plane: accepts ingest, answers /v1/gateway-status from `statuses` with an ETag. */
async function startControlPlane() {
  const seen: { path: string; status: number; ifNoneMatch?: string }[] = [];
  const cp = { statuses: [] as GatewayApiStatus[], seen, url: "" };
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://cp");
      const answer = (status: number, body?: string, headers: Record<string, string> = {}) => {
        seen.push({ path: url.pathname, status, ifNoneMatch: req.headers["if-none-match"] });
        res.writeHead(status, { "content-type": "application/json", ...headers }).end(body);
      };
      if (req.headers.authorization !== `Bearer ${token}`)
        return answer(401, '{"error":"wrong bearer token"}');
      if (req.method === "POST" && ["/v1/events", "/v1/resync"].includes(url.pathname))
        return answer(200, "{}");
      if (
        req.method !== "GET" ||
        url.pathname !== "/v1/gateway-status" ||
        url.searchParams.get("cluster") !== "st-1"
      )
        return answer(404, '{"error":"no route"}');
      const body = JSON.stringify({ statuses: cp.statuses });
      const etag = `"${createHash("sha256").update(body).digest("hex").slice(0, 16)}"`;
      if (req.headers["if-none-match"] === etag) return answer(304, undefined, { etag });
      answer(200, body, { etag });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cp.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  closers.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return cp;
}

function runRelay(api: FakeApiServer, cpUrl: string): { child: ChildProcess; output(): string } {
  const kubeconfig = join(mkdtempSync(join(tmpdir(), "relay-kube-")), "config");
  writeFileSync(kubeconfig, api.kubeconfigYaml());
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(RELAY_|EDGEPILOT_|CLUSTER_ID$|KUBECONFIG$)/.test(k)),
  );
  const child = spawn(process.execPath, ["bin/edgepilot.mjs", "relay"], {
    cwd: root,
    env: {
      ...base,
      HOME: mkdtempSync(join(tmpdir(), "relay-home-")),
      KUBECONFIG: kubeconfig,
      EDGEPILOT_URL: cpUrl,
      EDGEPILOT_TOKEN: token,
      CLUSTER_ID: "st-1",
      RELAY_RESYNC_PERIOD: "0",
      RELAY_WATCH_ISTIO: "false",
      RELAY_BATCH_DELAY: "10ms",
      RELAY_STATUS_INTERVAL: "100ms",
      RELAY_HEALTH_PORT: "0",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d) => {
    out += d;
  });
  child.stderr?.on("data", (d) => {
    out += d;
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  closers.push(async () => {
    if (child.exitCode === null) child.kill("SIGKILL");
    await exited;
  });
  return { child, output: () => out };
}

const accepted = (message: string) => ({
  type: "Accepted",
  status: "True",
  reason: "Accepted",
  message,
});
const resolved = {
  type: "ResolvedRefs",
  status: "True",
  reason: "ResolvedRefs",
  message: "All references resolved",
};

const ours = (
  resource: string,
  kind: string,
  name: string,
  parent: string,
  generation = 1,
): GatewayApiStatus => ({
  group,
  version: "v1",
  resource,
  kind,
  namespace: "apps",
  name,
  generation,
  status: {
    parents: [
      {
        parentRef: { group, kind: "Gateway", name: parent, namespace: "istio-ingress" },
        controllerName: controller,
        conditions: [accepted("Route was valid"), resolved],
      },
    ],
  },
});

const otherParent = {
  parentRef: { group, kind: "Gateway", name: "eg", namespace: "envoy-gateway" },
  controllerName: "gateway.envoyproxy.io/gatewayclass-controller",
  conditions: [
    {
      type: "Accepted",
      status: "True",
      reason: "Accepted",
      message: "theirs",
      lastTransitionTime: "2024-01-01T00:00:00Z",
    },
  ],
};

async function setup() {
  const api = await startFakeApiServer();
  closers.push(() => api.close());
  api.serveCrds(["v1"], ["gatewayclasses", "httproutes", "grpcroutes"]);
  api.apply("namespaces", named("apps"));
  api.apply("services", svc("reviews", "apps"));
  api.apply("gatewayclasses", { metadata: { name: "istio" }, spec: { controllerName: controller } });
  const route = api.apply("httproutes", {
    metadata: { name: "web", namespace: "apps" },
    spec: {
      parentRefs: [
        { name: "gw", namespace: "istio-ingress" },
        { name: "eg", namespace: "envoy-gateway" },
      ],
    },
  });
  // Another controller already reported its parent.
  expect(
    api.store.putStatus("httproutes", "apps", "web", { ...route, status: { parents: [otherParent] } }).code,
  ).toBe(200);
  api.apply("grpcroutes", {
    metadata: { name: "grpc", namespace: "apps" },
    spec: { parentRefs: [{ name: "gw", namespace: "istio-ingress" }] },
  });
  const cp = await startControlPlane();
  cp.statuses = [
    {
      group,
      version: "v1",
      resource: "gatewayclasses",
      kind: "GatewayClass",
      name: "istio",
      generation: 1,
      status: { conditions: [accepted("Handled by Istio controller")] },
    },
    ours("httproutes", "HTTPRoute", "web", "gw"),
    ours("grpcroutes", "GRPCRoute", "grpc", "gw"),
  ];
  return { api, cp };
}

const written = (api: FakeApiServer, code = 200) =>
  api.statusWrites.filter((w) => w.code === code).map((w) => `${w.resource} ${w.namespace ?? ""}/${w.name}`);

describe("edgepilot relay writes the Gateway API statuses back", () => {
  it("each status once, another controller's parent kept, nothing again while nothing changes", async () => {
    const { api, cp } = await setup();
    const relay = runRelay(api, cp.url);
    await eventually("three status writes", () => written(api).length === 3, 20_000);
    expect(written(api).sort()).toEqual([
      "gatewayclasses /istio",
      "grpcroutes apps/grpc",
      "httproutes apps/web",
    ]);

    const web = api.store.get("httproutes", "apps", "web");
    const parents = (web?.status as { parents: { controllerName: string; conditions: unknown[] }[] }).parents;
    expect(parents.map((p) => p.controllerName)).toEqual([otherParent.controllerName, controller]);
    expect(parents[0]).toEqual(otherParent);
    expect(parents[1]?.conditions).toEqual([
      {
        ...accepted("Route was valid"),
        observedGeneration: 1,
        lastTransitionTime: expect.stringMatching(/Z$/),
      },
      { ...resolved, observedGeneration: 1, lastTransitionTime: expect.stringMatching(/Z$/) },
    ]);
    const gc = api.store.get("gatewayclasses", undefined, "istio");
    expect(gc?.status).toMatchObject({
      conditions: [{ type: "Accepted", status: "True", observedGeneration: 1 }],
    });

    // Rounds keep running (the interval, and a delivered batch): each is a 304 and writes nothing.
    const rounds = cp.seen.filter((s) => s.status === 304).length;
    api.apply("services", svc("ratings", "apps"));
    await eventually(
      "more 304 rounds",
      () => cp.seen.filter((s) => s.status === 304).length >= rounds + 5,
      20_000,
    );
    expect(api.statusWrites).toHaveLength(3);
    expect(api.requests.filter((r) => r.method === "PUT")).toHaveLength(3);

    // A changed status is written once more, keeping the transition time of an unchanged condition.
    type Conds = {
      parents: { conditions: { type: string; status: string; lastTransitionTime: string }[] }[];
    };
    const grpcConditions = () =>
      (api.store.get("grpcroutes", "apps", "grpc")?.status as Conds).parents[0]?.conditions;
    const acceptedAt = grpcConditions()?.[0]?.lastTransitionTime;
    cp.statuses = [
      ...cp.statuses.slice(0, 2),
      {
        ...ours("grpcroutes", "GRPCRoute", "grpc", "gw"),
        status: {
          parents: [
            {
              parentRef: { group, kind: "Gateway", name: "gw", namespace: "istio-ingress" },
              controllerName: controller,
              conditions: [
                accepted("Route was valid"),
                {
                  type: "ResolvedRefs",
                  status: "False",
                  reason: "RefNotPermitted",
                  message: "backendRef not permitted",
                },
              ],
            },
          ],
        },
      },
    ];
    await eventually("the grpc route written again", () => written(api).length === 4, 20_000);
    expect(written(api)[3]).toBe("grpcroutes apps/grpc");
    // Accepted did not change status: its transition time stays (ResolvedRefs' moved to the write's time).
    expect(grpcConditions()?.map((c) => [c.type, c.status])).toEqual([
      ["Accepted", "True"],
      ["ResolvedRefs", "False"],
    ]);
    expect(grpcConditions()?.[0]?.lastTransitionTime).toBe(acceptedAt);
    expect(relay.output()).not.toContain("backendRef not permitted");
    // /ready counts the outcomes by kind.
    const health = (/health on (http:\/\/127\.0\.0\.1:\d+)/.exec(relay.output()) as RegExpExecArray)[1];
    const ready = (await (await fetch(`${health}/ready`)).json()) as { statusWrites: unknown };
    expect(ready.statusWrites).toEqual({
      GatewayClass: { written: 1, unchanged: 0, conflict: 0, failed: 0 },
      HTTPRoute: { written: 1, unchanged: 0, conflict: 0, failed: 0 },
      GRPCRoute: { written: 2, unchanged: 0, conflict: 0, failed: 0 },
    });
  });

  it("a 409 is retried at the next round with a fresh read, then settled", async () => {
    const { api, cp } = await setup();
    api.failNext("httproutes/web/status", 409, 1);
    const relay = runRelay(api, cp.url);
    await eventually("three status writes", () => written(api).length === 3, 20_000);
    const puts = api.requests.filter((r) => r.method === "PUT").map((r) => r.path);
    expect(puts.filter((p) => p.endsWith("/httproutes/web/status"))).toHaveLength(2);
    // Each read is a list selecting the object by name (the relay's list permission, no `get`).
    const gets = api.requests.filter(
      (r) => r.path.endsWith("/namespaces/apps/httproutes") && r.query.fieldSelector === "metadata.name=web",
    );
    expect(gets).toHaveLength(2);
    expect(relay.output()).toMatch(
      /status: "HTTPRoute apps\/web" changed while writing \(409\); again next round/,
    );
    const rounds = cp.seen.filter((s) => s.status === 304).length;
    await eventually(
      "more 304 rounds",
      () => cp.seen.filter((s) => s.status === 304).length >= rounds + 3,
      20_000,
    );
    expect(api.requests.filter((r) => r.method === "PUT")).toHaveLength(4);
  });
});
