/**
 * One harness for the restart tests (held-endpoints.test.ts, held-pods.test.ts): the mesh core on a
 * manual clock over a memory store, recording every shared ClusterLoadAssignment a push carried.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { createMeshCore } from "../../../lib/core/mesh-core.ts";
import { ClusterLoadAssignmentSchema } from "../../../lib/gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { defaultRegistryOptions } from "../../../lib/ingest/context.ts";
import { validateEvents, validateList } from "../../../lib/ingest/index.ts";
import { type DebounceOptions, defaultDebounceOptions } from "../../../lib/push/debounce.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys, type Store } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { endpointSlice } from "../../e2e/support/kube.ts";
import { createManualClock } from "../relay/manual-clock.ts";

/** The one port every service and slice of these tests has. */
export const port = { name: "grpc", port: 9080 };
/** A service's host in the default namespace. */
export const host = (name: string) => `${name}.default.svc.cluster.local`;
/** A service's shared ClusterLoadAssignment name. */
export const cla = (name: string) => `outbound|9080||${host(name)}`;
/** The EndpointSlice of service `name` with one ready endpoint per ip. */
export const slice = (name: string, ...ips: string[]) =>
  endpointSlice(
    `${name}-1`,
    name,
    "default",
    port,
    ips.map((ip) => ({ ip, ready: true })),
  );
/** The core's PILOT_SYNC_TIMEOUT. */
export const timeoutMs = 60_000;

/** The endpoint count of an encoded ClusterLoadAssignment. */
export const endpointCount = (body: Uint8Array) =>
  fromBinary(ClusterLoadAssignmentSchema, body).endpoints.reduce((n, l) => n + l.lbEndpoints.length, 0);

/** What a harness starts from: the same store and clock make a restart that kept its state. */
export interface RestartHarnessOptions {
  store?: Store;
  clock?: ReturnType<typeof createManualClock>;
  debounce?: DebounceOptions;
}

/** A core (not started) over `store` (by default a fresh one: a restart that lost the state). */
export function createRestartHarness({
  store = createMemoryStore(),
  clock = createManualClock(),
  debounce = defaultDebounceOptions,
}: RestartHarnessOptions = {}) {
  const lines: string[] = [];
  const core = createMeshCore({
    store,
    config: { debounce, registry: defaultRegistryOptions, syncTimeoutMs: timeoutMs },
    timers: clock,
    log: (line) => lines.push(line),
    requestTurn: () => undefined,
    newId: () => "instance-1",
  });
  /** Every shared ClusterLoadAssignment a push carried: name, endpoint count (null: removed), whether synced then. */
  const sent: { name: string; endpoints: number | null; synced: boolean }[] = [];
  let synced = false;
  core.feed.subscribe(({ changes }) => {
    for (const c of changes ?? []) {
      if (c.typeUrl !== TypeUrl.endpoint || c.view !== undefined) continue;
      sent.push({ name: c.name, endpoints: c.body ? endpointCount(c.body) : null, synced });
    }
  });
  /** A validated resync of `kind` from `cluster`. */
  const resync = async (cluster: string, kind: string, ...items: unknown[]) => {
    const v = await validateList(kind, { kind: `${kind}List`, metadata: { resourceVersion: "1" }, items });
    if (!v.ok) throw new Error(v.error.message);
    await core.ingest.resync(cluster, v.value);
  };
  /** A validated batch of watch events from `cluster`. */
  const events = async (cluster: string, ...raw: unknown[]) => {
    const v = validateEvents(raw);
    if (!v.ok) throw new Error(v.error.message);
    await core.ingest.events(cluster, v.value);
  };
  /** Moves past the debounce and runs one turn; notes whether the registry was synced as it began. */
  const settle = async () => {
    await clock.advance(defaultDebounceOptions.debounceAfter);
    synced = (await core.sync.state()).synced;
    return core.turn();
  };
  /** The endpoint count of the stored shared assignment `name` (a full name), undefined if none. */
  const stored = async (name: string) => {
    const r = (await store.get<StoredResource>(keys.resource(TypeUrl.endpoint, name)))?.value;
    return r ? endpointCount(r.body) : undefined;
  };
  return { core, clock, lines, sent, resync, events, settle, stored };
}
