/**
 * The golden test of `edgepilot proxy-status`: a real control plane (its own process), three
 * proxies on real gRPC ADS streams (one NACKing, one never ACKing its EDS answer), then the
 * command run as a child through bin/edgepilot.mjs prints istioctl's table; with a proxyID, the
 * comparison with what is published. Variable fields (the instance id, content hashes) are normalized.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ConfigDump } from "../../../lib/debug/config-dump.ts";
import { openDelta } from "../delta/delta-client.ts";
import { type AdsStream, openAds } from "../support/ads-client.ts";
import { endpointSlice, event, pod, service } from "../support/kube.ts";
import { type RunningControlPlane, startControlPlane } from "../support/runtime.ts";

const CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
const EDS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
const cluster = "outbound|9080||reviews.default.svc.cluster.local";
const port = { name: "grpc", port: 9080 };
const bin = fileURLToPath(new URL("../../../bin/edgepilot.mjs", import.meta.url));
const id = (name: string) => `sidecar~10.0.0.${name.length}~${name}.default~default.svc.cluster.local`;
const nodes = {
  synced: { id: id("synced"), metadata: { CLUSTER_ID: "east", ISTIO_VERSION: "1.24.0" } },
  nacking: { id: id("nacking"), metadata: { CLUSTER_ID: "west", ISTIO_VERSION: "1.24.0" } },
  waiting: { id: id("waiting-long"), metadata: { CLUSTER_ID: "east" } },
};

let cp: RunningControlPlane;
const streams: AdsStream[] = [];

/** Runs `edgepilot proxy-status <args>` as a child; resolves with its exit code and output. */
function run(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [bin, "proxy-status", ...args],
      { env: { ...process.env, ...env } },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Opens a stream for `node`, asks CDS and EDS, and answers each as told. */
async function proxy(node: (typeof nodes)[keyof typeof nodes], eds: "ack" | "nack" | "none") {
  const ads = openAds(cp.xdsPort);
  streams.push(ads);
  ads.send({ node, typeUrl: CDS });
  const c = await ads.next();
  ads.send({ typeUrl: EDS, resourceNames: [cluster] });
  const e = await ads.next();
  if (!c || !e) throw new Error(`no answer for ${node.id}`);
  ads.send({ typeUrl: CDS, versionInfo: c.versionInfo, responseNonce: c.nonce });
  if (eds === "ack")
    ads.send({ typeUrl: EDS, versionInfo: e.versionInfo, resourceNames: [cluster], responseNonce: e.nonce });
  if (eds === "nack")
    ads.send({
      typeUrl: EDS,
      resourceNames: [cluster],
      responseNonce: e.nonce,
      errorDetail: { code: 3, message: "endpoint 10.1.0.1 rejected by the golden test" },
    });
}

/** The instance id (a UUID, 36 characters) becomes a placeholder of its width, so columns stay aligned. */
const instance = "<instance>".padEnd(36, "-");
const normalize = (s: string) =>
  s
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, instance)
    .replace(/\b[0-9a-f]{16,}\b/g, "<hash>");

beforeAll(async () => {
  cp = await startControlPlane({ PILOT_DEBOUNCE_AFTER: "5ms" });
  await cp.post([
    event("ADDED", pod("reviews", "default", "10.1.0.1")),
    event("ADDED", service("reviews", "default", [port])),
    event("ADDED", endpointSlice("reviews-1", "reviews", "default", port, [{ ip: "10.1.0.1", ready: true }])),
  ]);
  await proxy(nodes.synced, "ack");
  await proxy(nodes.nacking, "nack");
  await proxy(nodes.waiting, "none");
  // Records are written at most once a second per stream: wait for the last ACK/NACK to land.
  for (let i = 0; i < 100; i++) {
    const rows = (await (await fetch(`http://127.0.0.1:${cp.port}/debug/syncz`)).json()) as {
      endpoint_sent?: string;
      endpoint_acked?: string;
      nacks?: unknown[];
    }[];
    if (
      rows.length === 3 &&
      rows.filter((r) => r.endpoint_sent === r.endpoint_acked).length === 1 &&
      rows.some((r) => r.nacks)
    )
      break;
    await new Promise((r) => setTimeout(r, 50));
  }
}, 30_000);
afterAll(async () => {
  for (const s of streams) s.close();
  await cp?.stop();
});

describe("edgepilot proxy-status", () => {
  it("prints istioctl's table: SYNCED, NOT SENT, NACKED, STALE (Never Acknowledged)", async () => {
    const r = await run(["--url", `http://127.0.0.1:${cp.port}`]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(normalize(r.stdout)).toBe(
      [
        "NAME                                                                 CLUSTER     CDS        LDS          EDS                            RDS          ISTIOD                                   VERSION",
        `sidecar~10.0.0.12~waiting-long.default~default.svc.cluster.local     east        SYNCED     NOT SENT     STALE (Never Acknowledged)     NOT SENT     ${instance}     *`,
        `sidecar~10.0.0.6~synced.default~default.svc.cluster.local            east        SYNCED     NOT SENT     SYNCED                         NOT SENT     ${instance}     1.24.0`,
        `sidecar~10.0.0.7~nacking.default~default.svc.cluster.local           west        SYNCED     NOT SENT     NACKED                         NOT SENT     ${instance}     1.24.0`,
        "",
      ].join("\n"),
    );
  });

  it("/debug/syncz says since when each proxy is connected", async () => {
    const rows = (await (await fetch(`http://127.0.0.1:${cp.port}/debug/syncz`)).json()) as {
      connected_since: string;
      updated_at: string;
    }[];
    expect(rows).toHaveLength(3);
    for (const r of rows) expect(Date.parse(r.connected_since)).toBeLessThanOrEqual(Date.parse(r.updated_at));
  });

  it("compares one proxy's record with what is published", async () => {
    const nacked = await run(["--url", `http://127.0.0.1:${cp.port}`, nodes.nacking.id]);
    expect(nacked.code).toBe(0);
    expect(normalize(nacked.stdout)).toBe(
      [
        `Proxy ${nodes.nacking.id}`,
        "Clusters Match",
        "Endpoints Don't Match",
        "  ! NACKed (kept nothing): endpoint 10.1.0.1 rejected by the golden test",
        "",
      ].join("\n"),
    );
    // An endpoint moves: the synced proxy's record still names what it ACKed, now stale.
    await cp.post([
      event(
        "MODIFIED",
        endpointSlice("reviews-1", "reviews", "default", port, [{ ip: "10.1.0.2", ready: true }]),
      ),
    ]);
    const dump = `http://127.0.0.1:${cp.port}/debug/config_dump?proxyID=${encodeURIComponent(nodes.synced.id)}`;
    for (let i = 0; i < 100; i++) {
      const d = (await (await fetch(dump)).json()) as ConfigDump;
      if (d.edgepilot.types.some((t) => t.resources.some((r) => r.sent !== r.published))) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const out = (await run(["--url", `http://127.0.0.1:${cp.port}`, nodes.synced.id])).stdout;
    expect(normalize(out)).toBe(
      [
        `Proxy ${nodes.synced.id}`,
        "Clusters Match",
        "Endpoints Don't Match",
        `  ~ ${cluster}: sent <hash>, published <hash>`,
        "",
      ].join("\n"),
    );
  }, 20_000);

  it("a Delta proxy that ACKed is SYNCED too (system_version_info sent = set version ACKed)", async () => {
    const delta = openDelta(cp.xdsPort);
    const deltaNode = { id: id("delta-proxy"), metadata: { CLUSTER_ID: "east" } };
    delta.send({ node: deltaNode, typeUrl: CDS, resourceNamesSubscribe: ["*"] });
    const r = await delta.next();
    delta.send({ typeUrl: CDS, responseNonce: r?.nonce ?? "" });
    let row: { cluster_sent?: string; cluster_acked?: string } | undefined;
    for (let i = 0; i < 100 && row?.cluster_acked === undefined; i++) {
      const url = `http://127.0.0.1:${cp.port}/debug/syncz?proxyID=${encodeURIComponent(deltaNode.id)}`;
      [row] = (await (await fetch(url)).json()) as (typeof row)[];
      if (row?.cluster_acked === undefined) await new Promise((res) => setTimeout(res, 50));
    }
    delta.close();
    expect(row?.cluster_sent).toBe(r?.systemVersionInfo);
    expect(row?.cluster_acked).toBe(row?.cluster_sent);
  });

  it("says why when the proxy has no record", async () => {
    const r = await run([
      "--url",
      `http://127.0.0.1:${cp.port}`,
      "sidecar~1.2.3.4~gone.default~default.svc.cluster.local",
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/404 no live status record for this proxyID/);
  });
});
