/**
 * A Store decorator that counts what each call would cost on DynamoDB on-demand, the way
 * lib/store/dynamodb.ts stores it and DynamoDB bills it: an item is its keys (dynamodb-layout.ts
 * itemKey), the value's stored bytes (dynamodb-values.ts valueToBytes) and the version; a strongly
 * consistent read costs 1 read request unit (RRU) per 4 KB of the item, at least 1 (GetItem, each
 * BatchGetItem key, found or not); a Query costs the summed size of the items it returns, per 4 KB,
 * at least 1; a write (put, conditional or not, failed or not; delete) costs 1 write request unit
 * (WRU) per 1 KB of the larger of the old and new item, at least 1. The first write into a
 * partition also names it in the adapter's partition directory (one small PutItem, once per process).
 * It does not pass the in-process capabilities on, so every write is seen one by one.
 */
import { itemKey, partitionOf } from "../../lib/store/dynamodb-layout.ts";
import { valueToBytes } from "../../lib/store/dynamodb-values.ts";
import type { Entry, Store } from "../../lib/store/store.ts";

/** Counts since the last reset. */
export interface UnitCounts {
  /** Read request units (strongly consistent). */
  rru: number;
  /** Write request units. */
  wru: number;
  /** Items read and written (calls' items, not units). */
  itemsRead: number;
  itemsWritten: number;
}

/** The counting store and its counters. */
export interface CountingStore {
  store: Store;
  counts(): UnitCounts;
  reset(): void;
}

/** Bytes of attribute names besides the keys: pk, sk, b (value), v (version). */
const attributeNames = "pk".length + "sk".length + "b".length + "v".length;
/** A version number's stored size (DynamoDB numbers: about one byte per two digits, plus one). */
const versionBytes = 4;

/** The size DynamoDB bills for the item holding `key` = `value`. */
export function itemBytes(key: string, value: unknown): number {
  const { pk, sk } = itemKey(key);
  return (
    attributeNames + Buffer.byteLength(pk) + Buffer.byteLength(sk) + valueToBytes(value).length + versionBytes
  );
}

/** Wraps `base` (see the module comment). */
export function countDynamoUnits(base: Store): CountingStore {
  let c: UnitCounts = { rru: 0, wru: 0, itemsRead: 0, itemsWritten: 0 };
  const partitions = new Set<string>();
  // Sizes of what is stored, so a read is billed by the item it returns and a write by the larger item.
  const sizes = new Map<string, number>();
  const sizeOf = (e: Entry | undefined) => {
    if (!e) return 0;
    let s = sizes.get(e.key);
    if (s === undefined) {
      s = itemBytes(e.key, e.value);
      sizes.set(e.key, s);
    }
    return s;
  };
  const read = (bytes: number) => {
    c.rru += Math.max(1, Math.ceil(bytes / 4096));
  };
  const write = (key: string, bytes: number) => {
    c.wru += Math.max(1, Math.ceil(bytes / 1024));
    c.itemsWritten++;
    const { part } = partitionOf(key);
    if (!partitions.has(part)) {
      partitions.add(part);
      c.wru += 1;
      c.itemsWritten++;
    }
  };
  const store: Store = {
    async get(key) {
      const e = await base.get(key);
      read(sizeOf(e as Entry | undefined));
      c.itemsRead++;
      return e as never;
    },
    async getMany(keys) {
      const found = await base.getMany(keys);
      for (const k of keys) read(sizeOf(found.get(k) as Entry | undefined));
      c.itemsRead += keys.length;
      return found as never;
    },
    async put(key, value, options) {
      const old = sizes.get(key) ?? sizeOf((await base.get(key)) as Entry | undefined);
      const bytes = itemBytes(key, value);
      const result = await base.put(key, value, options);
      write(key, Math.max(old, bytes));
      if (result.ok) sizes.set(key, bytes);
      return result;
    },
    async delete(key, options) {
      const old = sizes.get(key) ?? sizeOf((await base.get(key)) as Entry | undefined);
      const deleted = await base.delete(key, options);
      write(key, old);
      if (deleted) sizes.delete(key);
      return deleted;
    },
    async list(prefix, options) {
      const page = await base.list(prefix, options);
      let bytes = 0;
      for (const e of page.entries) bytes += sizeOf(e as Entry);
      read(bytes);
      c.itemsRead += page.entries.length;
      return page as never;
    },
  };
  return {
    store,
    counts: () => ({ ...c }),
    reset() {
      c = { rru: 0, wru: 0, itemsRead: 0, itemsWritten: 0 };
    },
  };
}
