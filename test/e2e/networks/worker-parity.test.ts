/**
 * One mesh, two hosts, the same network views: the `istio` ConfigMap's meshNetworks and
 * WorkloadEntries with `network` posted to `npm start`'s Node control plane and to the real Worker
 * on local workerd (wrangler's unstable_dev); REST-JSON discovery with node metadata NETWORK (and
 * REQUESTED_NETWORK_VIEW) answers every view at the same version_info on both, and different
 * views differently.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serviceEntry, workloadEntry } from "../../unit/ingest/support/istio.ts";
import { type RunningWorker, startWorker, workerXdsToken } from "../agent/worker.ts";
import { event } from "../support/kube.ts";
import { type RunningControlPlane, startControlPlane } from "../support/runtime.ts";

const HOST = "mesh.example.com";
const NAME = `outbound|9080||${HOST}`;
const TLS = { "security.istio.io/tlsMode": "istio" };

const mesh = [
  event("ADDED", {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "istio", namespace: "istio-system", resourceVersion: "1" },
    data: {
      meshNetworks: JSON.stringify({
        networks: {
          "network-a": { endpoints: [{ fromCidr: "10.1.0.0/16" }], gateways: [] },
          "network-b": {
            endpoints: [{ fromCidr: "10.2.0.0/16" }],
            gateways: [
              { address: "192.0.2.1", port: 15443 },
              { address: "192.0.2.2", port: 15443 },
            ],
          },
        },
      }),
    },
  }),
  event(
    "ADDED",
    serviceEntry("mesh", {
      hosts: [HOST],
      ports: [{ name: "grpc", number: 9080, targetPort: 8080, protocol: "GRPC" }],
      workloadSelector: { labels: { app: "mesh" } },
    }),
  ),
  ...[
    ["a1", "10.1.0.1", "network-a"],
    ["b1", "10.2.0.1", "network-b"],
    ["b2", "10.2.0.2", "network-b"],
    ["b3", "10.2.0.3", "network-b"],
  ].map(([name, address, network]) =>
    event("ADDED", workloadEntry(name as string, { address, network, labels: { app: "mesh", ...TLS } })),
  ),
];

const views: Record<string, Record<string, string>> = {
  "on A": { NETWORK: "network-a" },
  "on B": { NETWORK: "network-b" },
  "on A, seeing A": { NETWORK: "network-a", REQUESTED_NETWORK_VIEW: "network-a" },
  "no network": {},
};

let cp: RunningControlPlane;
let worker: RunningWorker;
let dir: string;

/** REST-JSON `/v3/discovery:endpoints` at `base` for a node with `metadata`: version_info and addresses. */
async function fetchView(base: string, metadata: Record<string, string>, token?: string) {
  const res = await fetch(`${base}/v3/discovery:endpoints`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token && { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({
      node: {
        id: "sidecar~10.1.0.9~client.default~default.svc.cluster.local",
        metadata: { GENERATOR: "grpc", ...metadata },
      },
      typeUrl: "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment",
      resourceNames: [NAME],
    }),
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  const json = JSON.parse(text) as {
    versionInfo?: string;
    resources?: {
      endpoints?: { lbEndpoints?: { endpoint: { address: { socketAddress: { address: string } } } }[] }[];
    }[];
  };
  const addresses = (json.resources ?? []).flatMap((r) =>
    (r.endpoints ?? []).flatMap((l) =>
      (l.lbEndpoints ?? []).map((e) => e.endpoint.address.socketAddress.address),
    ),
  );
  return { versionInfo: json.versionInfo ?? "", addresses: addresses.sort() };
}

const node = () => fetchView(`http://127.0.0.1:${cp.port}`, views["on A"] as Record<string, string>);
const onWorker = (metadata: Record<string, string>) =>
  fetchView(`http://127.0.0.1:${worker.port}`, metadata, workerXdsToken);

/** Polls `read` until its addresses include B's gateways (the flush ran with the networks), 20 s at most. */
async function converged(read: () => Promise<{ addresses: string[] }>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  let last: string[] = [];
  while (Date.now() < deadline) {
    last = (await read()).addresses;
    if (last.includes("192.0.2.1")) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} never served B's gateway; last ${last.join(" ")}`);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "edgepilot-netviews-"));
  [cp, worker] = await Promise.all([
    startControlPlane({ PILOT_DEBOUNCE_AFTER: "10ms" }),
    startWorker(dir, { PILOT_SYNC_TIMEOUT: "0s" }),
  ]);
  for (const post of [(e: unknown) => cp.post(e), (e: unknown) => worker.post(e)]) {
    const res = await post(mesh);
    expect(res.status, await res.text()).toBe(200);
  }
  await converged(node, "Node");
  await converged(() => onWorker(views["on A"] as Record<string, string>), "the Worker");
}, 90_000);

afterAll(async () => {
  await cp?.stop();
  await worker?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("network views on Node and on the Worker", () => {
  it.each(
    Object.entries(views),
  )("a node %s: the same assignment at the same version on both hosts", async (_, metadata) => {
    const onNode = await fetchView(`http://127.0.0.1:${cp.port}`, metadata);
    expect(await onWorker(metadata)).toEqual(onNode);
  });

  it("each view its own assignment", async () => {
    const seen = await Promise.all(
      Object.values(views).map((m) => fetchView(`http://127.0.0.1:${cp.port}`, m)),
    );
    expect(seen.map((s) => s.addresses.join(" "))).toEqual([
      "10.1.0.1 192.0.2.1 192.0.2.2",
      "10.1.0.1 10.2.0.1 10.2.0.2 10.2.0.3",
      "10.1.0.1",
      "10.1.0.1 192.0.2.1 192.0.2.2",
    ]);
    expect(new Set(seen.map((s) => s.versionInfo)).size).toBe(3);
  });
});
