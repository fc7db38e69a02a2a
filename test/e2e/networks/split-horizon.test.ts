/**
 * Split-horizon EDS end to end: `npm start`'s control plane, the `istio` ConfigMap's meshNetworks
 * and WorkloadEntries with `network` posted through the public ingest, real @grpc/grpc-js-xds
 * clients whose node metadata says NETWORK (and REQUESTED_NETWORK_VIEW), real grpc-js backends on
 * 127.0.0.x and a grpc-js server answering as network B's gateway. A client on A calls A's backend
 * directly and reaches B's three backends only through B's gateway, in proportion to the endpoints
 * behind each (localities weighted 1:3); a client asking to see A only never reaches B; a second
 * gateway added while calls run loses no call and shares B's weight; B's gateways removed, B's
 * backends are served directly again.
 *
 * B's WorkloadEntries are labelled `security.istio.io/tlsMode: istio` (istiod replaces only
 * endpoints taking Istio mutual TLS by a gateway); a DestinationRule with tls DISABLE keeps the
 * proxyless clients plaintext toward them (no proxyless auto-mTLS), so the plaintext gateway can answer.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { destinationRule, serviceEntry, workloadEntry } from "../../unit/ingest/support/istio.ts";
import { type Backend, startBackend } from "../support/backends.ts";
import { post, until } from "../support/converge.ts";
import { event } from "../support/kube.ts";
import { freePort, type RunningControlPlane, startControlPlane } from "../support/runtime.ts";
import { registerXdsPerChannel, type WhoClient, whoClient, xdsBootstrap } from "../support/xds-client.ts";

const HOST = "mesh.example.com";
const TLS = { "security.istio.io/tlsMode": "istio" };
const B_BACKENDS = ["b1", "b2", "b3"];

let cp: RunningControlPlane;
let port = 0;
let gatewayPort = 0;
const backends: Backend[] = [];
const clients: WhoClient[] = [];

/** The `istio` ConfigMap whose meshNetworks gives network B the gateways at `gateways` (127.0.0.x). */
function istioConfigMap(resourceVersion: string, gateways: string[]) {
  const networks = {
    "network-a": { endpoints: [{ fromCidr: "127.0.0.0/29" }], gateways: [] },
    "network-b": {
      endpoints: [{ fromCidr: "127.0.0.8/29" }],
      gateways: gateways.map((address) => ({ address, port: gatewayPort })),
    },
  };
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "istio", namespace: "istio-system", resourceVersion },
    // JSON is YAML: the ConfigMap's value as a cluster would hold it.
    data: { meshNetworks: JSON.stringify({ networks }) },
  };
}

/** A WorkloadEntry of the service at `address` on `network`, in `zone`. */
const entry = (name: string, address: string, network: string, zone: string) =>
  workloadEntry(name, { address, network, locality: `e2e/${zone}`, labels: { app: "mesh", ...TLS } });

/** A client of HOST whose node is on network A, with `metadata` beside it. */
function client(pod: string, metadata: Record<string, string> = {}): WhoClient {
  const node = `sidecar~127.0.0.9~${pod}.default~default.svc.cluster.local`;
  const c = whoClient(
    `xds:///${HOST}:9080`,
    xdsBootstrap(cp.xdsPort, node, { NETWORK: "network-a", ...metadata }),
  );
  clients.push(c);
  return c;
}

/** `n` calls in sequence, counted by who answered (a failed call counts as `error:<code>`). */
async function tally(c: WhoClient, n: number): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const who = await c.who(2000).catch((e: { code?: number }) => `error:${e.code}`);
    out[who] = (out[who] ?? 0) + 1;
  }
  return out;
}

beforeAll(async () => {
  port = await freePort();
  gatewayPort = await freePort();
  backends.push(
    await startBackend("a1", "127.0.0.1", port),
    ...(await Promise.all(B_BACKENDS.map((name, i) => startBackend(name, `127.0.0.${9 + i}`, port)))),
    await startBackend("gw1", "127.0.0.20", gatewayPort),
    await startBackend("gw2", "127.0.0.21", gatewayPort),
  );
  cp = await startControlPlane({ PILOT_DEBOUNCE_AFTER: "10ms" });
  registerXdsPerChannel();
  await post(
    cp,
    event("ADDED", istioConfigMap("1", ["127.0.0.20"])),
    event(
      "ADDED",
      serviceEntry("mesh", {
        hosts: [HOST],
        ports: [{ name: "grpc", number: 9080, targetPort: port, protocol: "GRPC" }],
        workloadSelector: { labels: { app: "mesh" } },
      }),
    ),
    event("ADDED", destinationRule(HOST, [], { spec: { trafficPolicy: { tls: { mode: "DISABLE" } } } })),
    event("ADDED", entry("a1", "127.0.0.1", "network-a", "a")),
    ...B_BACKENDS.map((name, i) => event("ADDED", entry(name, `127.0.0.${9 + i}`, "network-b", "b"))),
  );
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.close();
  await cp?.stop();
  await Promise.all(backends.map((b) => b.stop()));
});

describe("split-horizon EDS for proxyless gRPC clients", () => {
  it("a client on A calls A directly and B only through B's gateway, weighted by the endpoints behind it", async () => {
    const c = client("client-a");
    await until(cp, c, Date.now(), {
      accept: (a) => a === "a1" || a === "gw1",
      what: "A's backend or B's gateway",
    });
    const seen = await tally(c, 500);
    // Locality e2e/a holds a1 (weight 1), e2e/b the gateway standing for three endpoints (weight 3).
    expect(Object.keys(seen).sort()).toEqual(["a1", "gw1"]);
    expect(seen.gw1).toBeGreaterThan(325);
    expect(seen.gw1).toBeLessThan(425);
  });

  it("REQUESTED_NETWORK_VIEW of A only: B is never called", async () => {
    const c = client("client-a-only", { REQUESTED_NETWORK_VIEW: "network-a" });
    await until(cp, c, Date.now(), { accept: (a) => a === "a1", what: "A's backend" });
    expect(await tally(c, 100)).toEqual({ a1: 100 });
  });

  it("a second gateway added while calls run: no call lost, B's weight split between both", async () => {
    const c = client("client-a-change");
    await until(cp, c, Date.now(), { accept: (a) => a === "a1" || a === "gw1", what: "A or gw1" });
    let running = true;
    const loops = [0, 1, 2].map(async () => {
      const seen: Record<string, number> = {};
      while (running) {
        const who = await c.who(2000).catch((e: { code?: number }) => `error:${e.code}`);
        seen[who] = (seen[who] ?? 0) + 1;
      }
      return seen;
    });
    const at = await post(cp, event("MODIFIED", istioConfigMap("2", ["127.0.0.20", "127.0.0.21"])));
    const probe = client("client-a-probe");
    await until(cp, probe, at, { accept: (a) => a === "gw2", what: "B's second gateway", settle: 1 });
    running = false;
    const merged: Record<string, number> = {};
    for (const seen of await Promise.all(loops))
      for (const [who, n] of Object.entries(seen)) merged[who] = (merged[who] ?? 0) + n;
    expect(Object.keys(merged).filter((k) => k.startsWith("error:"))).toEqual([]);
    const after = await tally(c, 400);
    expect(Object.keys(after).sort()).toEqual(["a1", "gw1", "gw2"]);
  });

  it("B's gateways removed: B's backends are served directly again", async () => {
    const c = client("client-a-direct");
    const at = await post(cp, event("MODIFIED", istioConfigMap("3", [])));
    await until(cp, c, at, {
      accept: (a) => a !== "gw1" && a !== "gw2" && !a.startsWith("error"),
      what: "no gateway",
      settle: 20,
    });
    const seen = await tally(c, 200);
    expect(Object.keys(seen).sort()).toEqual(["a1", ...B_BACKENDS]);
  });
});
