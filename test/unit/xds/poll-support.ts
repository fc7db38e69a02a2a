/** Builders for the Poll/Watch unit tests: a mutable resource source that counts reads, requests, a manual timer. */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import { type PollRequest, PollRequestSchema } from "../../../lib/gen/edgepilot/xds/v1/poll_pb.ts";
import type {
  DeltaDiscoveryRequest,
  DeltaDiscoveryRequestSchema,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import type { ChangedResource } from "../../../lib/xds/poll-hub.ts";
import type { Timeout } from "../../../lib/xds/poll-serve.ts";
import type { ResourceSource } from "../../../lib/xds/source.ts";

/** Shorthands: a wildcard type and a named-only type. */
export const CDS = TypeUrl.cluster;
export const EDS = TypeUrl.endpoint;

/** A resource whose body is `name@version`, so different versions have different bytes. */
export const res = (typeUrl: TypeUrl, name: string, version: string): StoredResource => ({
  typeUrl,
  name,
  version,
  body: new TextEncoder().encode(`${name}@${version}`),
  service: "default/x",
});

/** A ResourceSource over a map the test changes, counting every read (get and list calls). */
export function mutableSource(initial: StoredResource[] = []) {
  const data = new Map<string, StoredResource>();
  const key = (t: string, n: string) => `${t}\n${n}`;
  for (const r of initial) data.set(key(r.typeUrl, r.name), r);
  const byName = (a: StoredResource, b: StoredResource) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  const counts = { get: 0, list: 0 };
  let afterRead: (() => void) | undefined;
  const after = <T>(result: T): T => {
    const f = afterRead;
    afterRead = undefined;
    f?.();
    return result;
  };
  const source: ResourceSource = {
    async get(typeUrl, names) {
      counts.get++;
      return after([...new Set(names)].flatMap((n) => data.get(key(typeUrl, n)) ?? []).sort(byName));
    },
    async list(typeUrl) {
      counts.list++;
      return after([...data.values()].filter((r) => r.typeUrl === typeUrl).sort(byName));
    },
  };
  return {
    source,
    counts,
    /** Writes a resource and says what changed, as a flush would. */
    put(r: StoredResource): ChangedResource[] {
      data.set(key(r.typeUrl, r.name), r);
      return [{ typeUrl: r.typeUrl, name: r.name }];
    },
    remove(typeUrl: TypeUrl, name: string): ChangedResource[] {
      data.delete(key(typeUrl, name));
      return [{ typeUrl, name }];
    },
    /** Runs `f` once, after the next read took its data and before it returns (a push racing a read). */
    onNextRead(f: () => void) {
      afterRead = f;
    },
  };
}

/** What a test sets of a DeltaDiscoveryRequest (plain init fields). */
export type DeltaInit = Exclude<MessageInitShape<typeof DeltaDiscoveryRequestSchema>, DeltaDiscoveryRequest>;

/** A PollRequest for `typeUrl`; `wait` in ms. */
export function pollRequest(typeUrl: string, o: DeltaInit = {}, waitMs?: number): PollRequest {
  return create(PollRequestSchema, {
    request: { typeUrl, ...o },
    ...(waitMs !== undefined && {
      wait: create(DurationSchema, {
        seconds: BigInt(Math.floor(waitMs / 1000)),
        nanos: (waitMs % 1000) * 1_000_000,
      }),
    }),
  });
}

/** A Timeout the test fires by hand: no real time passes in these tests. */
export function manualTimeout() {
  const timers: { ms: number; controller: AbortController; cancelled: boolean }[] = [];
  const timeout: Timeout = (ms) => {
    const t = { ms, controller: new AbortController(), cancelled: false };
    timers.push(t);
    const cancel = () => {
      t.cancelled = true;
    };
    return { signal: t.controller.signal, cancel };
  };
  return {
    timeout,
    timers,
    /** Fires every timer not cancelled yet. */
    fire() {
      for (const t of timers) if (!t.cancelled) t.controller.abort();
    },
    /** Timers started and not cancelled (a waiting poll holds one). */
    get live() {
      return timers.filter((t) => !t.cancelled).length;
    },
  };
}

/** Lets pending continuations run: one macrotask turn (no time passes that matters). */
export const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Turns the event loop until `cond` holds (hashing runs off-thread, so a fixed count of turns is not enough). */
export async function until(cond: () => boolean, what = "the condition"): Promise<void> {
  for (let i = 0; i < 10_000; i++) {
    if (cond()) return;
    await settle();
  }
  throw new Error(`${what} never held`);
}

/** Tracks whether a promise settled, without awaiting it. */
export function track<T>(p: Promise<T>): { done: () => boolean; value: Promise<T> } {
  let done = false;
  const value = p.finally(() => {
    done = true;
  });
  return { done: () => done, value };
}

/** Names and versions of a delta response's resources, and its removals. */
export function summary(r: { resources: { name: string; version: string }[]; removedResources: string[] }) {
  return {
    resources: Object.fromEntries(r.resources.map((x) => [x.name, x.version])),
    removed: r.removedResources,
  };
}
