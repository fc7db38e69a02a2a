/** Helpers for the restart suite: resync lists, the /ready sync body, a call loop that counts. */
import { create, fromBinary } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { expect } from "vitest";
import { StatusService } from "../../../lib/gen/edgepilot/v1/status_pb.ts";
import { ClusterSchema } from "../../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import { ClusterLoadAssignmentSchema } from "../../../lib/gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { AggregatedDiscoveryService } from "../../../lib/gen/envoy/service/discovery/v3/ads_pb.ts";
import {
  type DeltaDiscoveryRequest,
  DeltaDiscoveryRequestSchema,
  type DiscoveryResponse,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { checkDeltaResponse, checkSotwResponse } from "../../support/xds-check.ts";
import { event, service } from "../support/kube.ts";
import { requestQueue } from "../support/request-queue.ts";
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
  if (r) checkSotwResponse(r);
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

export const EDS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";

/** What an EDS watcher was told about one name: its endpoint count, or null for a removal. */
export interface EdsEvent {
  name: string;
  endpoints: number | null;
}

/** A Delta EDS stream that ACKs every response and records each assignment it is sent. */
export interface EdsWatcher {
  /** Every assignment and removal sent, in order. */
  events: EdsEvent[];
  /** name ─▶ version of what it holds. */
  held: Map<string, string>;
  error(): string;
  close(): void;
}

/**
 * Subscribes to `names` on a Delta stream (as an Envoy or the agent does for EDS, never wildcard),
 * saying it holds `initial` (initial_resource_versions after a reconnect).
 */
export function watchEds(
  port: number,
  nodeId: string,
  names: string[],
  initial: Record<string, string> = {},
): EdsWatcher {
  const client = createClient(
    AggregatedDiscoveryService,
    createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` }),
  );
  const queue = requestQueue<DeltaDiscoveryRequest>();
  const abort = new AbortController();
  const w = { events: [] as EdsEvent[], held: new Map(Object.entries(initial)), failure: "" };
  queue.push(
    create(DeltaDiscoveryRequestSchema, {
      node: { id: nodeId, metadata: { GENERATOR: "grpc" } },
      typeUrl: EDS,
      resourceNamesSubscribe: names,
      initialResourceVersions: initial,
    }),
  );
  void (async () => {
    try {
      for await (const r of client.deltaAggregatedResources(queue.requests, { signal: abort.signal })) {
        checkDeltaResponse(r);
        for (const res of r.resources) {
          const cla = fromBinary(ClusterLoadAssignmentSchema, res.resource?.value ?? new Uint8Array());
          const endpoints = cla.endpoints.reduce((n, l) => n + l.lbEndpoints.length, 0);
          w.events.push({ name: res.name, endpoints });
          w.held.set(res.name, res.version);
        }
        for (const name of r.removedResources) {
          w.events.push({ name, endpoints: null });
          w.held.delete(name);
        }
        queue.push(create(DeltaDiscoveryRequestSchema, { typeUrl: EDS, responseNonce: r.nonce }));
      }
    } catch (e) {
      if (!abort.signal.aborted) w.failure = String(e);
    }
  })();
  return {
    events: w.events,
    held: w.held,
    error: () => w.failure,
    close() {
      queue.close();
      abort.abort();
    },
  };
}

/** Waits until the control plane logs a push line after output offset `from` (at most 10s). */
export async function untilPushed(cp: RunningControlPlane, from: number): Promise<void> {
  await untilOutput(cp, from, /push \d+: /);
}

/** Waits (10s at most) until the control plane's output after offset `from` matches `pattern`. */
export async function untilOutput(cp: RunningControlPlane, from: number, pattern: RegExp): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!pattern.test(cp.output().slice(from))) {
    if (Date.now() > deadline) throw new Error(`no ${pattern} after offset ${from}:\n${cp.output()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
