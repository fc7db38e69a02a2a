/**
 * EndpointShards updates with Istio's push semantics (pilot/pkg/model/endpointshards.go,
 * EndpointIndex.UpdateServiceEndpoints and DeleteServiceShard): a pure core that returns the
 * push a change needs, and store wrappers that apply it with compare-and-set.
 */
import type { Endpoint, PushRequest, ShardKey } from "../model/index.ts";
import {
  configKeyString,
  endpointEquals,
  endpointKey,
  pushRequest,
  serviceConfigKey,
  shardKeyString,
} from "../model/index.ts";
import { keys } from "../store/keys.ts";
import type { Store } from "../store/store.ts";
import { ConflictError, listAll } from "../store/store.ts";
import { compareEndpoints, endpointListsEqual, sortUniqueEndpoints } from "./endpoint-order.ts";
import { loadShards, writeShards } from "./shard-store.ts";
import type { EndpointShardsRecord } from "./shards-record.ts";

/** What an endpoint change needs: nothing, an EDS-only push, or a full push (CDS and the rest too). */
export type PushType = "none" | "incremental" | "full";

/** The value stored under keys.slice(): the endpoints one EndpointSlice contributes to a shard. */
export interface SlicePiece {
  endpoints: Endpoint[];
}

/** Knobs of applyShardUpdate; every one defaults to Istio's default. */
export interface ShardUpdateOptions {
  /** PILOT_SEND_UNHEALTHY_ENDPOINTS: a new unhealthy endpoint is worth a push. Default false. */
  sendUnhealthy?: boolean;
}

/**
 * The outcome of applyShardUpdate. `record` is undefined only when there was no record and the
 * update had no endpoints (Istio creates nothing then). `changed` says whether `record` differs
 * from `current`, so a caller writes only when it must; a change may still need no push.
 */
export interface ShardUpdateResult {
  record: EndpointShardsRecord | undefined;
  pushType: PushType;
  changed: boolean;
}

/**
 * Replaces one shard's endpoints and says what to push. A service never seen ▶ full. No
 * endpoints ▶ the shard is dropped, the record (and its service accounts) kept, incremental:
 * a crash-looping pod must not cause full pushes. Otherwise changed or removed endpoints ▶
 * incremental, a new endpoint only if healthy (or sendUnhealthy), identical ▶ none; and a
 * changed set of service accounts over all shards ▶ full. Stored endpoints are sorted and unique.
 */
export function applyShardUpdate(
  current: EndpointShardsRecord | undefined,
  shard: ShardKey,
  hostname: string,
  namespace: string,
  endpoints: readonly Endpoint[],
  options: ShardUpdateOptions = {},
): ShardUpdateResult {
  const key = shardKeyString(shard);
  if (endpoints.length === 0) {
    if (!current) return { record: undefined, pushType: "incremental", changed: false };
    const unchanged = { record: current, pushType: "incremental", changed: false } as const;
    if (!Object.hasOwn(current.shards, key)) return unchanged;
    // Istio keeps the service accounts here too: they return with the pod, without a full push.
    const record = withShards(current, omitShard(current.shards, key), current.serviceAccounts);
    return { record, pushType: "incremental", changed: true };
  }

  const next = sortUniqueEndpoints(endpoints);
  const old = current?.shards[key];
  let pushType: PushType = current ? "incremental" : "full";
  if (pushType !== "full" && !endpointUpdateRequiresPush(old, next, options.sendUnhealthy ?? false)) {
    pushType = "none";
  }

  // A first shard is a record of one key, sorted as it is (no spread, no sortKeys below). The key
  // is assigned, not computed in the literal (V8 builds those through the runtime); a shard key
  // holds "/", so it is never "__proto__".
  const shards: Record<string, Endpoint[]> = current ? { ...current.shards } : {};
  shards[key] = next;
  const serviceAccounts = serviceAccountsOf(shards);
  const saChanged = !stringListsEqual(serviceAccounts, current?.serviceAccounts ?? []);
  if (saChanged) pushType = "full";

  const record = current
    ? withShards(current, shards, serviceAccounts)
    : { hostname, namespace, shards, serviceAccounts };
  const changed = !current || saChanged || old === undefined || !endpointListsEqual(old, next);
  return { record, pushType, changed };
}

/**
 * Istio's endpointUpdateRequiresPush: true when an existing endpoint changed, a new endpoint is
 * healthy (or unhealthy ones are sent), or an endpoint went away. No old shard ▶ true.
 */
export function endpointUpdateRequiresPush(
  old: readonly Endpoint[] | undefined,
  incoming: readonly Endpoint[],
  sendUnhealthy: boolean,
): boolean {
  if (old === undefined) return true;
  // Canonical lists (every stored shard, every sortUniqueEndpoints answer): one merge walk, no keys built.
  if (strictlyOrdered(old) && strictlyOrdered(incoming))
    return requiresPushOrdered(old, incoming, sendUnhealthy);
  const byKey = new Map(old.map((e) => [endpointKey(e), e]));
  for (const e of incoming) {
    const before = byKey.get(endpointKey(e));
    if (before ? !endpointEquals(before, e) : e.health !== "UNHEALTHY" || sendUnhealthy) return true;
  }
  const incomingKeys = new Set(incoming.map(endpointKey));
  return old.some((e) => !incomingKeys.has(endpointKey(e)));
}

/** Whether `list` is sorted by compareEndpoints with no two endpoints of one endpointKey. */
function strictlyOrdered(list: readonly Endpoint[]): boolean {
  for (let i = 1; i < list.length; i++)
    if (compareEndpoints(list[i - 1] as Endpoint, list[i] as Endpoint) >= 0) return false;
  return true;
}

/**
 * endpointUpdateRequiresPush over two strictly ordered lists: endpoints of one endpointKey meet
 * in one walk (same key ⇔ compareEndpoints 0), so the answer is the keyed one's without a Map.
 */
function requiresPushOrdered(
  old: readonly Endpoint[],
  incoming: readonly Endpoint[],
  sendUnhealthy: boolean,
): boolean {
  let i = 0;
  for (const e of incoming) {
    if (i < old.length) {
      const c = compareEndpoints(old[i] as Endpoint, e);
      if (c < 0) return true; // old[i] is before every incoming endpoint left: it went away
      if (c === 0) {
        if (!endpointEquals(old[i] as Endpoint, e)) return true;
        i++;
        continue;
      }
    }
    if (e.health !== "UNHEALTHY" || sendUnhealthy) return true; // a new endpoint
  }
  return i < old.length; // old ones past the last incoming are gone
}

/**
 * Removes one shard, as when the service is deleted in that cluster (Istio DeleteServiceShard).
 * Service accounts are recomputed from what is left. With keepKey false a record left without
 * shards is gone: null. Returns `current` itself when nothing changes, null when there is none.
 */
export function deleteShard(
  current: EndpointShardsRecord | undefined,
  shard: ShardKey,
  options: { keepKey: boolean },
): EndpointShardsRecord | null {
  if (!current) return null;
  const shards = omitShard(current.shards, shardKeyString(shard));
  if (!options.keepKey && Object.keys(shards).length === 0) return null;
  const serviceAccounts = serviceAccountsOf(shards);
  const same =
    Object.keys(shards).length === Object.keys(current.shards).length &&
    stringListsEqual(serviceAccounts, current.serviceAccounts);
  return same ? current : withShards(current, shards, serviceAccounts);
}

/** The sorted, unique, non-empty service accounts of every endpoint in every shard. */
export function serviceAccountsOf(shards: Readonly<Record<string, readonly Endpoint[]>>): string[] {
  const out = new Set<string>();
  for (const list of Object.values(shards)) {
    for (const e of list) if (e.serviceAccount !== "") out.add(e.serviceAccount);
  }
  return [...out].sort();
}

/**
 * Applies applyShardUpdate to the stored record with compare-and-set, retrying on conflict, and
 * returns the push it needs. Writes nothing when nothing changed; a record kept in pieces
 * (shard-store.ts) rewrites only the pieces whose endpoints changed.
 */
export async function updateServiceEndpoints(
  store: Store,
  shard: ShardKey,
  hostname: string,
  namespace: string,
  endpoints: readonly Endpoint[],
  options: ShardUpdateOptions = {},
): Promise<PushType> {
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const loaded = await loadShards(store, namespace, hostname);
    const result = applyShardUpdate(loaded.record, shard, hostname, namespace, endpoints, options);
    if (!result.changed || !result.record) return result.pushType;
    if (await writeShards(store, loaded, result.record)) return result.pushType;
  }
  throw new ConflictError(keys.shards(namespace, hostname), maxAttempts);
}

/**
 * The service was deleted in one cluster: drops that shard with compare-and-set, and the record
 * (pieces and all) when no shard is left. True when the store changed. The caller pushes for the
 * service event.
 */
export async function deleteServiceShard(
  store: Store,
  shard: ShardKey,
  hostname: string,
  namespace: string,
): Promise<boolean> {
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const loaded = await loadShards(store, namespace, hostname);
    if (!loaded.record) return false;
    const next = deleteShard(loaded.record, shard, { keepKey: false });
    if (next === loaded.record) return false;
    if (await writeShards(store, loaded, next)) return true;
  }
  throw new ConflictError(keys.shards(namespace, hostname), maxAttempts);
}

/** Compare-and-set attempts before a writer gives up (as store.ts update). */
const maxAttempts = 16;

/**
 * The endpoints of one cluster's shard of a service: the union of every slice piece stored
 * under keys.slicePrefix(), sorted and unique by endpointKey.
 */
export async function shardEndpointsFromSlices(
  store: Store,
  namespace: string,
  hostname: string,
  cluster: string,
): Promise<Endpoint[]> {
  const pieces = await listAll<SlicePiece>(store, keys.slicePrefix(namespace, hostname, cluster));
  return sortUniqueEndpoints(pieces.flatMap((p) => p.value.endpoints));
}

/**
 * The push an endpoint update needs (Istio EDSUpdate): reason "endpoint", scoped to the
 * service's ConfigKey, full when the update was; undefined when nothing needs pushing.
 */
export function pushForShardUpdate(
  pushType: PushType,
  hostname: string,
  namespace: string,
  now: number,
): PushRequest | undefined {
  if (pushType === "none") return undefined;
  return pushRequest({
    full: pushType === "full",
    configs: [configKeyString(serviceConfigKey(hostname, namespace))],
    reason: "endpoint",
    start: now,
  });
}

function withShards(
  current: EndpointShardsRecord,
  shards: Record<string, Endpoint[]>,
  serviceAccounts: string[],
): EndpointShardsRecord {
  return {
    hostname: current.hostname,
    namespace: current.namespace,
    shards: sortKeys(shards),
    serviceAccounts,
  };
}

function omitShard(shards: Record<string, Endpoint[]>, key: string): Record<string, Endpoint[]> {
  const { [key]: _dropped, ...rest } = shards;
  return rest;
}

/** Shard keys in sorted order, so equal records serialize to equal bytes. */
function sortKeys(shards: Record<string, Endpoint[]>): Record<string, Endpoint[]> {
  return Object.fromEntries(Object.entries(shards).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function stringListsEqual(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((s, i) => s === b[i]);
}
