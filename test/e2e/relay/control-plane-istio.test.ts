/**
 * The relay feeding the real control plane (npm start as a child process) from a fake API server
 * that serves ServiceEntry at v1 and v1beta1 but WorkloadEntry at v1beta1 only (a CRD one Istio
 * upgrade behind): the relay watches each at its newest served version; the control plane's
 * start-up sync waits for every kind the relay says it watches (?watching=), WorkloadEntry
 * included; the ServiceEntry's workloadSelector finds the WorkloadEntries in the served
 * ClusterLoadAssignment, listed first, then watched.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Relay } from "../../../functions/node/relay/relay.ts";
import { type RunningControlPlane, startControlPlane } from "../support/runtime.ts";
import { type FakeApiServer, startFakeApiServer } from "./fake-apiserver.ts";
import { crdResources } from "./fake-crds.ts";
import { named, relayToControlPlane } from "./harness.ts";

let cp: RunningControlPlane;
let api: FakeApiServer;
let relay: Relay;
const logs: string[] = [];
const edsType = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
const pay = "outbound|9080||pay.example.com";

const workloadEntry = (name: string, address: string) => ({
  metadata: { name, namespace: "default" },
  spec: { address, labels: { app: "pay" } },
});

/** The addresses of the served ClusterLoadAssignment `name` (REST-JSON xDS on PORT). */
async function addresses(name: string): Promise<string[]> {
  const res = await fetch(`http://127.0.0.1:${cp.port}/v3/discovery:endpoints`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ type_url: edsType, resource_names: [name] }),
  });
  if (res.status !== 200) return [];
  const body = (await res.json()) as {
    resources?: {
      endpoints?: { lbEndpoints?: { endpoint?: { address?: { socketAddress?: { address?: string } } } }[] }[];
    }[];
  };
  return (body.resources ?? [])
    .flatMap((r) => r.endpoints ?? [])
    .flatMap((l) => l.lbEndpoints ?? [])
    .map((e) => e.endpoint?.address?.socketAddress?.address ?? "")
    .sort();
}

async function until(what: string, want: string[]): Promise<void> {
  const deadline = Date.now() + 15_000;
  let got: string[] = [];
  while (Date.now() < deadline) {
    got = await addresses(pay);
    if (JSON.stringify(got) === JSON.stringify(want)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(
    `timed out waiting for ${what}; ${pay} has ${got.join(", ")}\n${logs.join("\n")}\n${cp.output()}`,
  );
}

beforeAll(async () => {
  cp = await startControlPlane({ PILOT_DEBOUNCE_AFTER: "10ms" });
  api = await startFakeApiServer();
  api.apply("namespaces", named("default"));
  api.apply("nodes", named("node-1"));
  api.serveCrds(
    ["v1", "v1beta1"],
    crdResources().filter((r) => r !== "workloadentries"),
  );
  api.serveCrds(["v1beta1"], ["workloadentries"]);
  api.apply("serviceentries", {
    metadata: { name: "pay", namespace: "default" },
    spec: {
      hosts: ["pay.example.com"],
      location: "MESH_INTERNAL",
      ports: [{ name: "grpc", number: 9080, protocol: "GRPC" }],
      resolution: "STATIC",
      workloadSelector: { labels: { app: "pay" } },
    },
  });
  api.apply("workloadentries", workloadEntry("pay-a", "10.9.0.1"));
  // The WorkloadEntries cannot be listed until the first test lets them.
  api.failNext("workloadentries", 503, Number.MAX_SAFE_INTEGER);
  relay = relayToControlPlane(api, cp, logs, { config: { watchIstio: true } });
  relay.start();
});

afterAll(async () => {
  await relay?.stop(500);
  await api?.close();
  await cp?.stop();
});

/** The control plane's start-up sync of cluster relay-e2e, as GET /ready shows it. */
async function clusterSync(): Promise<{ synced?: boolean; waitingFor?: string[] } | undefined> {
  const res = await fetch(`http://127.0.0.1:${cp.port}/ready`);
  const body = (await res.json()) as {
    clusters?: { cluster: string; synced: boolean; waitingFor?: string[] }[];
  };
  return body.clusters?.find((c) => c.cluster === "relay-e2e");
}

async function syncIs(what: string, check: (c: Awaited<ReturnType<typeof clusterSync>>) => boolean) {
  const deadline = Date.now() + 15_000;
  let last: unknown;
  while (Date.now() < deadline) {
    const c = await clusterSync();
    last = c;
    if (check(c)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}; /ready says ${JSON.stringify(last)}\n${logs.join("\n")}`);
}

describe("relay ▶ control plane: a ServiceEntry selecting a WorkloadEntry served at v1beta1 only", () => {
  it("start-up sync waits for the WorkloadEntries (the relay said it watches them); once listed, they are the ServiceEntry's endpoints", async () => {
    await syncIs("every kind but WorkloadEntry resynced", (c) => c?.waitingFor?.join() === "WorkloadEntry");
    expect(await clusterSync()).toMatchObject({ synced: false });
    api.clearFailures();
    await until("pay-a's address", ["10.9.0.1"]);
    await syncIs("the cluster synced", (c) => c?.synced === true && c.waitingFor?.length === 0);
    const watched = (resource: string) =>
      api.requests
        .filter((r) => r.query.watch === "true" && r.path.endsWith(`/${resource}`))
        .map((r) => r.path);
    expect(watched("workloadentries")[0]).toBe("/apis/networking.istio.io/v1beta1/workloadentries");
    expect(watched("serviceentries")[0]).toBe("/apis/networking.istio.io/v1/serviceentries");
    expect(relay.stats()).toMatchObject({ rejectedEvents: 0, rejectedResyncs: 0 });
  });

  it("a WorkloadEntry added and one removed on the watch move the endpoints", async () => {
    api.apply("workloadentries", workloadEntry("pay-b", "10.9.0.2"));
    await until("pay-b added", ["10.9.0.1", "10.9.0.2"]);
    api.remove("workloadentries", "default", "pay-a");
    await until("pay-a removed", ["10.9.0.2"]);
    expect(relay.stats()).toMatchObject({ rejectedEvents: 0, rejectedResyncs: 0 });
  });
});
