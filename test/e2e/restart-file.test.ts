/**
 * Restart with the durable store (issue 7 §1): a control plane on EDGEPILOT_STORE=file is killed
 * with SIGKILL after a push, and a new process on the same data directory serves the same
 * resources at once, before any ingest reaches it. A proxy reconnecting with what it holds is
 * resent nothing and told to remove nothing; a SotW proxy and a Fetch get every cluster.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ClusterDiscoveryService } from "../../lib/gen/envoy/service/cluster/v3/cds_pb.ts";
import { type DeltaStream, openDelta } from "./delta/delta-client.ts";
import { apply, CDS, EDS, LDS, names, node, pushVersion, RDS, serviceEvents } from "./delta/mesh.ts";
import { openAds } from "./support/ads-client.ts";
import { type RunningControlPlane, startControlPlane } from "./support/runtime.ts";

const types = [CDS, EDS, LDS, RDS];
const reviews = names("reviews");
const ratings = names("ratings");
/** What the proxy subscribes to, per type: wildcard LDS/CDS, named EDS/RDS. */
const subscriptions: Record<string, string[]> = {
  [CDS]: ["*"],
  [EDS]: [reviews.cluster, ratings.cluster],
  [LDS]: ["*"],
  [RDS]: [reviews.listener, ratings.listener],
};

let dataDir: string;
let pendingDir: string;
const planes: RunningControlPlane[] = [];
const streams: { close(): void }[] = [];

/** A control plane on the file store in `dir` (`dataDir` unless given); stopped after the test file. */
async function start(dir = dataDir, debounce = "5ms"): Promise<RunningControlPlane> {
  const cp = await startControlPlane({
    PILOT_DEBOUNCE_AFTER: debounce,
    PILOT_DEBOUNCE_MAX: "60s",
    EDGEPILOT_STORE: "file",
    EDGEPILOT_DATA_DIR: dir,
  });
  planes.push(cp);
  return cp;
}

/** Opens a Delta stream subscribing to every type, saying it holds `held` (per type). */
function subscribe(cp: RunningControlPlane, held = new Map<string, Map<string, string>>()): DeltaStream {
  const s = openDelta(cp.xdsPort);
  streams.push(s);
  for (const typeUrl of types) {
    s.send({
      node: node("restarting"),
      typeUrl,
      resourceNamesSubscribe: subscriptions[typeUrl],
      initialResourceVersions: Object.fromEntries(held.get(typeUrl) ?? []),
    });
  }
  return s;
}

/** Envoy's unary FetchClusters against `cp`: the version and the encoded clusters. */
async function fetchClusters(cp: RunningControlPlane) {
  const cds = createClient(
    ClusterDiscoveryService,
    createGrpcTransport({ baseUrl: `http://127.0.0.1:${cp.xdsPort}` }),
  );
  const r = await cds.fetchClusters({ node: node("fetcher"), typeUrl: CDS });
  return { versionInfo: r.versionInfo, clusters: r.resources.map((a) => a.value) };
}

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), "edgepilot-restart-"));
  pendingDir = mkdtempSync(join(tmpdir(), "edgepilot-restart-pending-"));
});
afterEach(() => {
  for (const s of streams.splice(0)) s.close();
});
afterAll(async () => {
  await Promise.all(planes.map((cp) => cp.stop()));
  for (const dir of [dataDir, pendingDir]) rmSync(dir, { recursive: true, force: true });
});

describe("restart on the file store", () => {
  it("serves its last state at once after kill -9: nothing resent, nothing removed", async () => {
    const first = await start();
    await apply(first, [
      ...serviceEvents("reviews", ["10.3.0.1", "10.3.0.2"]),
      ...serviceEvents("ratings", ["10.3.1.1"]),
    ]);
    const s = subscribe(first);
    const responses = await s.drain();
    for (const r of responses) s.send({ typeUrl: r.typeUrl, responseNonce: r.nonce });
    const held = new Map(types.map((t) => [t, s.holds(t)]));
    expect([...held].map(([t, h]) => [t, h.size])).toEqual(types.map((t) => [t, 2]));
    const fetched = await fetchClusters(first);
    expect(fetched.clusters).toHaveLength(2);
    const version = await pushVersion(first);

    expect(await first.stop("SIGKILL")).toBeNull();
    const second = await start();

    // No event has reached the new process: all it serves comes from the data directory.
    expect(await pushVersion(second)).toBe(version);
    expect(await fetchClusters(second)).toEqual(fetched);
    const again = subscribe(second, held);
    expect(await again.next(500), "a reconnecting proxy is resent nothing").toBeUndefined();
    // Still live: a name it newly asks for is answered (and, being absent, removed).
    const absent = "outbound|1||absent.default.svc.cluster.local";
    again.send({ typeUrl: EDS, resourceNamesSubscribe: [absent] });
    expect((await again.next())?.removedResources).toEqual([absent]);

    const sotw = openAds(second.xdsPort);
    streams.push(sotw);
    sotw.send({ node: node("sotw"), typeUrl: CDS });
    const cds = await sotw.next();
    expect(cds?.resources.map((a) => a.value)).toEqual(fetched.clusters);
    expect(second.output()).toContain(`edgepilot: store: file ${join(dataDir, "edgepilot.sqlite")}`);

    // A third process on the same directory stops at start-up instead of sharing it.
    await expect(start()).rejects.toThrow(
      `edgepilot: cannot start: EDGEPILOT_DATA_DIR=${dataDir}: file store: ${join(dataDir, "edgepilot.sqlite")} is in use by another process\n`,
    );

    // SIGTERM closes the store: the log is checkpointed into the database file and emptied.
    expect(await second.stop()).toBe(0);
    expect(statSync(join(dataDir, "edgepilot.sqlite-wal"), { throwIfNoEntry: false })?.size ?? 0).toBe(0);
  }, 60_000);

  it("publishes, at start, events acknowledged but not yet pushed when it was killed", async () => {
    // A debounce longer than the test: the first process acknowledges the events and never pushes.
    const first = await start(pendingDir, "60s");
    const res = await first.post(serviceEvents("reviews", ["10.3.0.1"]));
    expect(res.status).toBe(200);
    expect(await fetchClusters(first)).toEqual({ versionInfo: expect.any(String), clusters: [] });
    expect(await first.stop("SIGKILL")).toBeNull();

    const second = await start(pendingDir);
    for (const deadline = Date.now() + 5000; (await fetchClusters(second)).clusters.length === 0; ) {
      if (Date.now() > deadline) throw new Error(`nothing published:\n${second.output()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect((await fetchClusters(second)).clusters).toHaveLength(1);
  }, 60_000);
});
