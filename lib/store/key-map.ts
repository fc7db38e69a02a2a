/**
 * A string-keyed map whose growth never re-inserts many keys in one step. A JS Map doubles its
 * table when full and re-inserts every entry at once, so one `set` on a Map of hundreds of
 * thousands of keys is one long step of the event loop, however the work around it is paced. Past
 * `splitAt` keys this map spreads its keys over `shardCount` Maps by a hash of the key, so a growth
 * step re-inserts one shard's keys; the keys the plain Map held move over one per operation.
 */

/** The Map operations the memory store and the staged view use. Values are never undefined. */
export interface KeyMap<V extends object> {
  get(key: string): V | undefined;
  has(key: string): boolean;
  set(key: string, value: V): void;
  /** True when the key was there. */
  delete(key: string): boolean;
  readonly size: number;
}

/**
 * Keys held in one plain Map before it is split (its last doubling re-inserts half as many). Below
 * it a map pays no hashing (a 500-event batch's staged view, a 10k-service mesh's ingested state);
 * above it every operation hashes its key.
 */
export const splitAt = 1 << 16;
const shardBits = 6;
const shardCount = 1 << shardBits;
/**
 * Keys moved from the plain Map to the shards per operation once split. One: a synchronous run of
 * thousands of operations (a commit's slice of writes) must not carry the whole move with it.
 */
const moveStep = 1;

/** A fresh, empty map. */
export function createKeyMap<V extends object>(): KeyMap<V> {
  /** The plain Map: every key until the split, then those not moved to a shard yet. */
  let one: Map<string, V> | undefined = new Map();
  /** Where `one`'s keys are moved from once split (a key is in `one` or in a shard, never both). */
  let moving: Iterator<string> | undefined;
  const shards: Map<string, V>[] = [];
  /** Keys held once split. */
  let count = 0;
  const shardOf = (key: string) => shards[keyHash(key) & (shardCount - 1)] as Map<string, V>;
  /** Moves a few keys of the plain Map to their shards; drops it once empty. */
  const move = (from: Map<string, V>, keys: Iterator<string>) => {
    for (let i = 0; i < moveStep; i++) {
      const next = keys.next();
      if (next.done) {
        one = undefined;
        moving = undefined;
        return;
      }
      shardOf(next.value).set(next.value, from.get(next.value) as V);
      from.delete(next.value);
    }
  };
  const get = (key: string): V | undefined => {
    if (!moving) return one ? one.get(key) : shardOf(key).get(key);
    move(one as Map<string, V>, moving);
    return shardOf(key).get(key) ?? one?.get(key);
  };
  return {
    get,
    has(key) {
      return get(key) !== undefined;
    },
    set(key, value) {
      if (one && !moving) {
        one.set(key, value);
        if (one.size < splitAt) return;
        for (let i = 0; i < shardCount; i++) shards.push(new Map());
        count = one.size;
        moving = one.keys();
        return;
      }
      if (moving) move(one as Map<string, V>, moving);
      const shard = shardOf(key);
      const before = shard.size;
      shard.set(key, value);
      // A key new to its shard is new to the map unless it was still in the plain Map.
      if (shard.size > before && !one?.delete(key)) count++;
    },
    delete(key) {
      if (one && !moving) return one.delete(key);
      if (moving) move(one as Map<string, V>, moving);
      if (!shardOf(key).delete(key) && !one?.delete(key)) return false;
      count--;
      return true;
    },
    get size() {
      return one && !moving ? one.size : count;
    },
  };
}

/**
 * A cheap hash of a store key: FNV-1a steps over at most 32 of its characters, every one of a short
 * key, evenly spaced from the last of a long one (store keys differ in names, anywhere in the key).
 */
export function keyHash(key: string): number {
  const n = key.length;
  const step = n <= 32 ? 1 : Math.ceil(n / 32);
  let h = Math.imul(n, 0x9e3779b1);
  for (let i = n - 1; i >= 0; i -= step) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h ^ (h >>> 16);
}
