/**
 * Restart on the DynamoDB store: a control plane on EDGEPILOT_STORE=dynamodb (dynalite started
 * here) is killed with SIGKILL after a push, and a new process on the same table serves the same
 * resources at once, before any ingest reaches it: a proxy reconnecting with what it holds is
 * resent nothing; events acknowledged but not yet pushed are published at start.
 */
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ClusterDiscoveryService } from "../../lib/gen/envoy/service/cluster/v3/cds_pb.ts";
import { type RunningDynalite, startDynalite } from "../support/dynalite.ts";
import { type DeltaStream, openDelta } from "./delta/delta-client.ts";
import { apply, CDS, EDS, LDS, names, node, pushVersion, RDS, serviceEvents } from "./delta/mesh.ts";
import { type RunningControlPlane, startControlPlane } from "./support/runtime.ts";

const types = [CDS, EDS, LDS, RDS];
const reviews = names("reviews");
const subscriptions: Record<string, string[]> = {
  [CDS]: ["*"],
  [EDS]: [reviews.cluster],
  [LDS]: ["*"],
  [RDS]: [reviews.listener],
};

let dynalite: RunningDynalite;
const planes: RunningControlPlane[] = [];
const streams: { close(): void }[] = [];

/** A control plane on the DynamoDB store in `table` of the dynalite server. */
async function start(table: string, debounce = "5ms"): Promise<RunningControlPlane> {
  const cp = await startControlPlane({
    PILOT_DEBOUNCE_AFTER: debounce,
    PILOT_DEBOUNCE_MAX: "60s",
    EDGEPILOT_STORE: "dynamodb",
    DYNAMODB_ENDPOINT: dynalite.endpoint,
    DYNAMODB_TABLE: table,
  });
  planes.push(cp);
  return cp;
}

function subscribe(cp: RunningControlPlane, held = new Map<string, Map<string, string>>()): DeltaStream {
  const s = openDelta(cp.xdsPort);
  streams.push(s);
  for (const typeUrl of types)
    s.send({
      node: node("restarting"),
      typeUrl,
      resourceNamesSubscribe: subscriptions[typeUrl],
      initialResourceVersions: Object.fromEntries(held.get(typeUrl) ?? []),
    });
  return s;
}

async function fetchClusters(cp: RunningControlPlane) {
  const cds = createClient(
    ClusterDiscoveryService,
    createGrpcTransport({ baseUrl: `http://127.0.0.1:${cp.xdsPort}` }),
  );
  const r = await cds.fetchClusters({ node: node("fetcher"), typeUrl: CDS });
  return { versionInfo: r.versionInfo, clusters: r.resources.map((a) => a.value) };
}

beforeAll(async () => {
  dynalite = await startDynalite();
});
afterEach(() => {
  for (const s of streams.splice(0)) s.close();
});
afterAll(async () => {
  await Promise.all(planes.map((cp) => cp.stop()));
  await dynalite?.stop();
});

describe("restart on the DynamoDB store", () => {
  it("serves its last state at once after kill -9: nothing resent", async () => {
    const first = await start("restart");
    await apply(first, serviceEvents("reviews", ["10.3.0.1", "10.3.0.2"]));
    const s = subscribe(first);
    for (const r of await s.drain()) s.send({ typeUrl: r.typeUrl, responseNonce: r.nonce });
    const held = new Map(types.map((t) => [t, s.holds(t)]));
    expect([...held].map(([t, h]) => [t, h.size])).toEqual(types.map((t) => [t, 1]));
    const fetched = await fetchClusters(first);
    const version = await pushVersion(first);

    expect(await first.stop("SIGKILL")).toBeNull();
    const second = await start("restart");
    expect(second.output()).toContain(`edgepilot: store: DynamoDB table restart at ${dynalite.endpoint}`);
    expect(second.output()).not.toContain("created DynamoDB table");
    expect(await pushVersion(second)).toBe(version);
    expect(await fetchClusters(second)).toEqual(fetched);
    const again = subscribe(second, held);
    expect(await again.next(500), "a reconnecting proxy is resent nothing").toBeUndefined();
  }, 60_000);

  it("publishes, at start, events acknowledged but not yet pushed when it was killed", async () => {
    const first = await start("pending", "60s");
    expect((await first.post(serviceEvents("reviews", ["10.3.0.1"]))).status).toBe(200);
    expect((await fetchClusters(first)).clusters).toEqual([]);
    expect(await first.stop("SIGKILL")).toBeNull();
    const second = await start("pending");
    for (const deadline = Date.now() + 5000; (await fetchClusters(second)).clusters.length === 0; ) {
      if (Date.now() > deadline) throw new Error(`nothing published:\n${second.output()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect((await fetchClusters(second)).clusters).toHaveLength(1);
  }, 60_000);
});
