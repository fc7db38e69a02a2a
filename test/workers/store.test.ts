import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { MeshStore } from "../../functions/workers/mesh-store.ts";
import { createDurableObjectStore } from "../../lib/store/durable-object.ts";
import { createStagedStore } from "../../lib/store/staged.ts";
import { listAll, type Store } from "../../lib/store/store.ts";
import { storeCases } from "../unit/store/store.cases.ts";

/** A fresh MeshStore (new id) for each test. */
const freshStub = () => env.MESH.get(env.MESH.newUniqueId());

/** The SQL store of the object behind `stub`, each call made inside the object (no RPC, no codec hop). */
function inDurableObject(stub: DurableObjectStub<MeshStore>): Store {
  const run = <R>(op: (store: Store) => Promise<R>) => runInDurableObject(stub, (object) => op(object.store));
  return {
    get: (key) => run((s) => s.get(key)),
    getMany: (keys) => run((s) => s.getMany(keys)),
    put: (key, value, options) => run((s) => s.put(key, value, options)),
    delete: (key, options) => run((s) => s.delete(key, options)),
    list: (prefix, options) => run((s) => s.list(prefix, options)),
  };
}

storeCases("Durable Object over RPC", () => createDurableObjectStore(freshStub()));

storeCases("SQL store inside the Durable Object", () => inDurableObject(freshStub()));

// Ingest's staged view (all or nothing) over the Durable Object, as the Worker's ingest uses it.
storeCases("staged view over the Durable Object", () =>
  createStagedStore(createDurableObjectStore(freshStub())),
);

describe("staged view over the Durable Object", () => {
  it("merges pages over RPC and commits once into the object", async () => {
    const base = createDurableObjectStore(freshStub());
    for (const k of ["p/1", "p/3", "p/5"]) await base.put(k, { base: k });
    const staged = createStagedStore(base);
    await staged.put("p/2", "new");
    await staged.delete("p/3");
    await staged.put("p/5", "changed");
    const view = (await listAll(staged, "p/")).map((e) => [e.key, e.value]);
    expect(view).toEqual([
      ["p/1", { base: "p/1" }],
      ["p/2", "new"],
      ["p/5", "changed"],
    ]);
    expect((await listAll(base, "p/")).map((e) => e.key)).toEqual(["p/1", "p/3", "p/5"]);
    expect(await staged.commit()).toBe(3);
    expect((await listAll(base, "p/")).map((e) => [e.key, e.value])).toEqual(view);
  });
});

describe("MeshStore", () => {
  it("serves one state to RPC callers and to code inside the object, kept in table kv", async () => {
    const stub = freshStub();
    const remote = createDurableObjectStore(stub);
    expect(await remote.put("svc/ns/a", { bytes: new Uint8Array([1]) })).toEqual({ ok: true, version: 1 });
    const rows = await runInDurableObject(stub, async (object, state) => {
      expect(await object.store.get("svc/ns/a")).toEqual({
        key: "svc/ns/a",
        value: { bytes: new Uint8Array([1]) },
        version: 1,
      });
      await object.store.put("svc/ns/b", "local");
      return state.storage.sql.exec("SELECT key, value, version FROM kv ORDER BY key").toArray();
    });
    expect(rows).toEqual([
      { key: "svc/ns/a", value: '{"bytes":{"$bytes":"AQ=="}}', version: 1 },
      { key: "svc/ns/b", value: '"local"', version: 1 },
    ]);
    expect(await remote.get("svc/ns/b")).toEqual({ key: "svc/ns/b", value: "local", version: 1 });
  });

  it("keeps state across stubs for the same id", async () => {
    const id = env.MESH.idFromName("mesh");
    await createDurableObjectStore(env.MESH.get(id)).put("meta/version", 7);
    expect(await createDurableObjectStore(env.MESH.get(id)).get("meta/version")).toEqual({
      key: "meta/version",
      value: 7,
      version: 1,
    });
  });
});
