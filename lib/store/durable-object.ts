/**
 * The Store port carried over Durable Object RPC. The object that owns the mesh state serves
 * `StoreRpc` (see `serveStoreRpc`); any Worker turns a stub into a Store with
 * `createDurableObjectStore`. Values cross as `codec.ts` strings, so bytes survive exactly and the
 * wire format does not depend on what structured clone happens to support.
 */
import { decodeValue, encodeValue } from "./codec.ts";
import { MAX_LIST_LIMIT } from "./sql.ts";
import type { DeleteOptions, Entry, ListOptions, PutOptions, Store } from "./store.ts";

/** An entry whose value is `encodeValue` text. */
export interface WireEntry {
  key: string;
  value: string;
  version: number;
}

export type WirePutResult = { ok: true; version: number } | { ok: false; current: WireEntry | undefined };

export interface WirePage {
  entries: WireEntry[];
  cursor?: string;
}

/** What a store-owning Durable Object exposes over RPC: the Store port with encoded values. */
export interface StoreRpc {
  storeGet(key: string): Promise<WireEntry | undefined>;
  /** Entries for the keys that exist, in no particular order. */
  storeGetMany(keys: string[]): Promise<WireEntry[]>;
  storePut(key: string, value: string, options?: PutOptions): Promise<WirePutResult>;
  storeDelete(key: string, options?: DeleteOptions): Promise<boolean>;
  storeList(prefix: string, options?: ListOptions): Promise<WirePage>;
}

/**
 * A Store whose every call is one RPC to `stub`. Atomicity comes from the object behind the stub:
 * compare-and-set is decided there, in one event, so concurrent callers anywhere see one order.
 */
export function createDurableObjectStore(stub: StoreRpc): Store {
  return {
    async get<T>(key: string) {
      const wire = await stub.storeGet(key);
      return wire && fromWire<T>(wire);
    },

    /**
     * At most MAX_LIST_LIMIT keys per call, calls one after another: the object never encodes more
     * than a page's worth of values for one call, however many names a request asks for.
     */
    async getMany<T>(keys: readonly string[]) {
      const out = new Map<string, Entry<T>>();
      const unique = [...new Set(keys)];
      for (let i = 0; i < unique.length; i += MAX_LIST_LIMIT) {
        const wires = await stub.storeGetMany(unique.slice(i, i + MAX_LIST_LIMIT));
        for (const wire of wires) out.set(wire.key, fromWire<T>(wire));
      }
      return out;
    },

    async put<T>(key: string, value: T, options?: PutOptions) {
      const result = await stub.storePut(key, encodeValue(value), options);
      if (result.ok) return { ok: true, version: result.version };
      return { ok: false, current: result.current && fromWire(result.current) };
    },

    delete(key: string, options?: DeleteOptions) {
      return stub.storeDelete(key, options);
    },

    async list<T>(prefix: string, options?: ListOptions) {
      const page = await stub.storeList(prefix, options);
      const entries = page.entries.map((wire) => fromWire<T>(wire));
      return page.cursor === undefined ? { entries } : { entries, cursor: page.cursor };
    },
  };
}

/** Serves `StoreRpc` from any Store: decodes what arrives, encodes what leaves. */
export function serveStoreRpc(store: Store): StoreRpc {
  return {
    async storeGet(key) {
      const entry = await store.get(key);
      return entry && toWire(entry);
    },
    async storeGetMany(keys) {
      return [...(await store.getMany(keys)).values()].map(toWire);
    },
    async storePut(key, value, options) {
      const result = await store.put(key, decodeValue(value), options);
      if (result.ok) return result;
      return { ok: false, current: result.current && toWire(result.current) };
    },
    storeDelete(key, options) {
      return store.delete(key, options);
    },
    async storeList(prefix, options) {
      const page = await store.list(prefix, options);
      const entries = page.entries.map(toWire);
      return page.cursor === undefined ? { entries } : { entries, cursor: page.cursor };
    },
  };
}

function toWire(entry: Entry): WireEntry {
  return { key: entry.key, value: encodeValue(entry.value), version: entry.version };
}

function fromWire<T>(wire: WireEntry): Entry<T> {
  return { key: wire.key, value: decodeValue<T>(wire.value), version: wire.version };
}
