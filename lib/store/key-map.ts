/**
 * A string-keyed map whose growth never re-inserts many keys in one step. A JS Map doubles its
 * table when full and re-inserts every entry at once, so one `set` on a Map of hundreds of
 * thousands of keys is one long step of the event loop, however the work around it is paced. Past
 * `splitAt` keys this map spreads its keys over `shardCount` Maps by a hash of the key, so a growth
 * step re-inserts one shard's keys. Small maps stay one plain Map and pay no hashing.
 */

/** The Map operations the memory store and the staged view use. */
export interface KeyMap<V> {
  get(key: string): V | undefined;
  has(key: string): boolean;
  set(key: string, value: V): void;
  /** True when the key was there. */
  delete(key: string): boolean;
  readonly size: number;
}

/** Keys held in one plain Map before it is split: its last doubling re-inserts half as many. */
const splitAt = 1 << 13;
const shardBits = 6;
const shardCount = 1 << shardBits;

/** A fresh, empty map. */
export function createKeyMap<V>(): KeyMap<V> {
  let one: Map<string, V> | undefined = new Map();
  const shards: Map<string, V>[] = [];
  /** Keys held once split (each shard's size summed as it changes). */
  let count = 0;
  const shardOf = (key: string) => shards[keyHash(key) & (shardCount - 1)] as Map<string, V>;
  const split = (from: Map<string, V>) => {
    for (let i = 0; i < shardCount; i++) shards.push(new Map());
    for (const [k, v] of from) shardOf(k).set(k, v);
    count = from.size;
    one = undefined;
  };
  return {
    get(key) {
      return one ? one.get(key) : shardOf(key).get(key);
    },
    has(key) {
      return one ? one.has(key) : shardOf(key).has(key);
    },
    set(key, value) {
      if (one) {
        one.set(key, value);
        if (one.size >= splitAt) split(one);
        return;
      }
      const shard = shardOf(key);
      const before = shard.size;
      shard.set(key, value);
      count += shard.size - before;
    },
    delete(key) {
      if (one) return one.delete(key);
      if (!shardOf(key).delete(key)) return false;
      count--;
      return true;
    },
    get size() {
      return one ? one.size : count;
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
