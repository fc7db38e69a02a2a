/**
 * The Durable Object that owns the mesh state. One instance (by name) holds every key in its
 * SQLite storage; Workers reach it through `createDurableObjectStore(env.MESH.get(id))`.
 */
import { DurableObject } from "cloudflare:workers";
import { type StoreRpc, serveStoreRpc } from "../../lib/store/durable-object.ts";
import { createSqlStore } from "../../lib/store/sql.ts";
import type { DeleteOptions, ListOptions, PutOptions, Store } from "../../lib/store/store.ts";
import type { Env } from "./index.ts";

/** Serves the Store port over RPC; each call runs in one event, so compare-and-set is atomic. */
export class MeshStore extends DurableObject<Env> implements StoreRpc {
  readonly #store: Store;
  readonly #rpc: StoreRpc;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#store = createSqlStore(ctx.storage.sql);
    this.#rpc = serveStoreRpc(this.#store);
  }

  /** The SQL store itself, for code running inside this object (no RPC, no re-encoding). */
  get store(): Store {
    return this.#store;
  }

  storeGet(key: string) {
    return this.#rpc.storeGet(key);
  }

  storeGetMany(keys: string[]) {
    return this.#rpc.storeGetMany(keys);
  }

  storePut(key: string, value: string, options?: PutOptions) {
    return this.#rpc.storePut(key, value, options);
  }

  storeDelete(key: string, options?: DeleteOptions) {
    return this.#rpc.storeDelete(key, options);
  }

  storeList(prefix: string, options?: ListOptions) {
    return this.#rpc.storeList(prefix, options);
  }

  // ---- Debounce (lead): alarm() runs the debounce flush over `this.store`. Not implemented yet. ----
}
