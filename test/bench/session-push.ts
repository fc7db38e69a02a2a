/**
 * The cost of one endpoint change inside Delta (lib/xds/delta.ts) or SotW (lib/xds/sotw.ts)
 * sessions over the memory store, no transport: ingest and flush, then each session's push and
 * ACK. "change-aware" hands the session the flush's changes, bytes included (what the Node runtime
 * does); "full re-diff" re-reads and re-diffs every subscribed name (what a push that cannot name
 * its changes costs). Versions hash with node:crypto, as the Node runtime does.
 */
import { create } from "@bufbuild/protobuf";
import { nodeSha256 } from "../../functions/node/sha256.ts";
import {
  DeltaDiscoveryRequestSchema,
  DiscoveryRequestSchema,
} from "../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { ResourceChange } from "../../lib/resources/changes.ts";
import { useSyncSha256 } from "../../lib/resources/version.ts";
import { TypeUrl } from "../../lib/resources/xds-types.ts";
import { createDeltaSession } from "../../lib/xds/delta.ts";
import { createSotwSession } from "../../lib/xds/sotw.ts";
import { createStoreSource, type ResourceSource } from "../../lib/xds/source.ts";
import { buildMesh, hostOf, sliceEvent } from "./mesh.ts";

type Mesh = Awaited<ReturnType<typeof buildMesh>>;

const clusterOf = (n: number) => `outbound|9080||${hostOf(n)}`;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

/** One stream's session as the bench drives it: subscribe, push, and ACK what was sent. */
interface BenchSession {
  subscribe(names: string[]): Promise<void>;
  push(changed: readonly ResourceChange[] | undefined): Promise<void>;
}

function deltaBench(source: ResourceSource, stream: number): BenchSession {
  const session = createDeltaSession({ source });
  // As a stream drives it (lib/xds/ads-stream.ts): one call per input, awaited only when it
  // returned a promise.
  const ack = async (responses: { typeUrl: string; nonce: string }[]) => {
    for (const r of responses) {
      const out = session.onRequest(
        create(DeltaDiscoveryRequestSchema, { typeUrl: r.typeUrl, responseNonce: r.nonce }),
      );
      if (!Array.isArray(out)) await out;
    }
  };
  return {
    async subscribe(names) {
      const req = create(DeltaDiscoveryRequestSchema, {
        node: {
          id: `sidecar~10.1.0.1~p${stream}.bench~bench.svc.cluster.local`,
          metadata: { GENERATOR: "grpc" },
        },
        typeUrl: TypeUrl.endpoint,
        resourceNamesSubscribe: names,
      });
      await ack(await session.onRequest(req));
    },
    push: async (changed) => {
      const out = session.onPush(undefined, changed);
      await ack(Array.isArray(out) ? out : await out);
    },
  };
}

function sotwBench(source: ResourceSource, stream: number): BenchSession {
  const session = createSotwSession({ source });
  let subscribed: string[] = [];
  const ack = async (responses: { typeUrl: string; nonce: string; versionInfo: string }[]) => {
    for (const r of responses)
      await session.onRequest(
        create(DiscoveryRequestSchema, {
          typeUrl: r.typeUrl,
          responseNonce: r.nonce,
          versionInfo: r.versionInfo,
          resourceNames: subscribed,
        }),
      );
  };
  return {
    async subscribe(names) {
      subscribed = names;
      const req = create(DiscoveryRequestSchema, {
        node: {
          id: `sidecar~10.1.0.1~p${stream}.bench~bench.svc.cluster.local`,
          metadata: { GENERATOR: "grpc" },
        },
        typeUrl: TypeUrl.endpoint,
        resourceNames: names,
      });
      await ack(await session.onRequest(req));
    },
    push: async (changed) => ack(await session.onPush(undefined, changed)),
  };
}

export interface SessionPushReport {
  services: number;
  streams: number;
  /** Median ms from the ingest call to every session having answered and been ACKed. */
  changeAwareMs: number;
  fullRediffMs: number;
  /** Median ms of the sessions' part alone (push and ACK of every session). */
  changeAwareSessionsMs: number;
  fullRediffSessionsMs: number;
  /** CPU per session per push, change-aware (µs). */
  cpuPerStreamUs: number;
}

/**
 * `streams` sessions over a mesh of `services`, each subscribed to the EDS of `names(s)`, then
 * `runs` endpoint changes of service 0 pushed change-aware, and `runs` pushed as full re-diffs.
 */
export async function measureSessionPush(
  services: number,
  streams: number,
  names: (stream: number) => number[],
  runs = 20,
  built?: Mesh,
  protocol: "delta" | "sotw" = "delta",
): Promise<SessionPushReport> {
  useSyncSha256(nodeSha256); // as the Node runtime does
  const mesh = built ?? (await buildMesh(services));
  const source = createStoreSource(mesh.store);
  const sessions: BenchSession[] = [];
  for (let s = 0; s < streams; s++) {
    const session = protocol === "delta" ? deltaBench(source, s) : sotwBench(source, s);
    await session.subscribe(names(s).map(clusterOf));
    sessions.push(session);
  }
  let change = 0;
  const run = async (aware: boolean) => {
    const ips = [`10.250.${change % 250}.1`, `10.250.${++change % 250}.2`];
    const t = performance.now();
    const { flushes } = await mesh.ingestAndPush([sliceEvent(0, ips, "MODIFIED")]);
    const changed: ResourceChange[] = flushes.flatMap((f) => f.changes);
    const t1 = performance.now();
    const cpu = process.cpuUsage();
    for (const s of sessions) await s.push(aware ? changed : undefined);
    const used = process.cpuUsage(cpu);
    const end = performance.now();
    return { total: end - t, sessions: end - t1, cpuUs: used.user + used.system };
  };
  const aware: { total: number; sessions: number; cpuUs: number }[] = [];
  for (let i = 0; i < runs; i++) aware.push(await run(true));
  const full: { total: number; sessions: number }[] = [];
  for (let i = 0; i < runs; i++) full.push(await run(false));
  return {
    services,
    streams,
    changeAwareMs: median(aware.map((x) => x.total)),
    fullRediffMs: median(full.map((x) => x.total)),
    changeAwareSessionsMs: median(aware.map((x) => x.sessions)),
    fullRediffSessionsMs: median(full.map((x) => x.sessions)),
    cpuPerStreamUs: median(aware.map((x) => x.cpuUs)) / streams,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const n = Number(process.argv[2] ?? 100);
  const mesh = await buildMesh(n);
  const all = Array.from({ length: n }, (_, i) => i);
  for (const protocol of ["delta", "sotw"] as const) {
    const run = (streams: number, names: (s: number) => number[]) =>
      measureSessionPush(n, streams, names, 20, mesh, protocol);
    console.log(protocol, "whole", JSON.stringify(await run(1, () => all)));
    console.log(protocol, "focused", JSON.stringify(await run(1, () => [0, 1, 2])));
    console.log(protocol, "fanout", JSON.stringify(await run(1000, (s) => [0, 1 + (s % (n - 1))])));
  }
}
