/** Helpers for the restart suite: resync lists, the /ready sync body, a call loop that counts. */
import { fromBinary } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { expect } from "vitest";
import { StatusService } from "../../../lib/gen/edgepilot/v1/status_pb.ts";
import { ClusterSchema } from "../../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import type { DiscoveryResponse } from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { event, service } from "../support/kube.ts";
import type { RunningControlPlane } from "../support/runtime.ts";
import type { WhoClient } from "../support/xds-client.ts";

/** A List as the API server answers a list call. */
export const listOf = (kind: string, items: unknown[]) => ({
  apiVersion: "v1",
  kind,
  metadata: { resourceVersion: String(Date.now()) },
  items,
});

/** POSTs a resync of `kind` for the default cluster; expects 200 and returns the instance header. */
export async function resync(cp: RunningControlPlane, kind: string, list: unknown): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${cp.port}/v1/resync?kind=${kind}`, {
    method: "POST",
    headers: { authorization: `Bearer ${cp.token}`, "content-type": "application/json" },
    body: JSON.stringify(list),
  });
  const body = (await res.json()) as { instance?: string };
  expect(res.status, JSON.stringify(body)).toBe(200);
  const header = res.headers.get("x-edgepilot-instance");
  expect(header).toBe(body.instance);
  return header as string;
}

/** The sync part of GET /ready's body. */
export interface ReadySync {
  synced: boolean;
  timedOut: boolean;
  instance: string;
  clusters: { cluster: string; services: boolean; endpoints: boolean; synced: boolean }[];
}

export async function syncOf(cp: RunningControlPlane): Promise<ReadySync> {
  const res = await fetch(`http://127.0.0.1:${cp.port}/ready`);
  expect(res.status).toBe(200);
  return (await res.json()) as ReadySync;
}

/** GetStatus's `sync`, over gRPC on XDS_PORT. */
export async function statusSync(cp: RunningControlPlane) {
  const client = createClient(
    StatusService,
    createGrpcTransport({ baseUrl: `http://127.0.0.1:${cp.xdsPort}` }),
  );
  return (await client.getStatus({})).sync;
}

/** The cluster names a SotW CDS response carries, sorted. */
export function cdsNames(r: DiscoveryResponse | undefined): string[] {
  return (r?.resources ?? []).map((a) => fromBinary(ClusterSchema, a.value).name).sort();
}

interface CallStats {
  ok: number;
  failed: number;
  /** Answers from another backend than the one expected. */
  others: number;
  errors: string[];
}

/** Calls `client` back to back (one at a time, 10ms apart) until stopped, counting every outcome. */
export function callLoop(client: WhoClient, expected = "reviews") {
  const stats: CallStats = { ok: 0, failed: 0, others: 0, errors: [] };
  let running = true;
  void (async () => {
    while (running) {
      try {
        const who = await client.who(1000);
        if (who === expected) stats.ok++;
        else stats.others++;
      } catch (err) {
        stats.failed++;
        stats.errors.push(`${new Date().toISOString()} ${err instanceof Error ? err.message : String(err)}`);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return {
    stats: () => ({ ...stats }),
    async until(cond: (s: CallStats) => boolean, what: string) {
      const deadline = Date.now() + 15_000;
      while (!cond(stats)) {
        if (Date.now() > deadline) throw new Error(`${what}: never reached; ${JSON.stringify(stats)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    stop(): CallStats {
      running = false;
      return { ...stats };
    },
  };
}

/**
 * Posts a new probe Service (namespace `probe`) every 300ms until a push line says it reached at
 * least `streams` streams; returns the probe clusters' names (each is a new CDS resource).
 */
export async function untilStreams(cp: RunningControlPlane, streams: number): Promise<string[]> {
  const names: string[] = [];
  const deadline = Date.now() + 20_000;
  for (let i = 0; Date.now() < deadline; i++) {
    const from = cp.output().length;
    const res = await cp.post([
      event("ADDED", service(`probe-${i}`, "probe", [{ name: "grpc", port: 9080 }])),
    ]);
    expect(res.status).toBe(200);
    names.push(`outbound|9080||probe-${i}.probe.svc.cluster.local`);
    await new Promise((r) => setTimeout(r, 300));
    const counts = [
      ...cp
        .output()
        .slice(from)
        .matchAll(/push \d+: .* (\d+) stream\(s\)/g),
    ].map((m) => Number(m[1]));
    if (counts.some((n) => n >= streams)) return names;
  }
  throw new Error(`never ${streams} streams:\n${cp.output()}`);
}
