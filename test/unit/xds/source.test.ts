import { describe, expect, it } from "vitest";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import type { Store } from "../../../lib/store/store.ts";
import { createStoreSource } from "../../../lib/xds/source.ts";
import { type StoredResource, TypeUrl } from "../../../lib/xds/types.ts";

const res = (typeUrl: TypeUrl, name: string, version = "v1"): StoredResource => ({
  typeUrl,
  name,
  version,
  body: new TextEncoder().encode(`${name}@${version}`),
  service: "default/x",
});

async function storeWith(resources: StoredResource[]) {
  const store = createMemoryStore();
  for (const r of resources) await store.put(keys.resource(r.typeUrl, r.name), r);
  return store;
}

describe("createStoreSource", () => {
  it("gets the named resources that exist, sorted by name, each once", async () => {
    const source = createStoreSource(
      await storeWith([res(TypeUrl.cluster, "b"), res(TypeUrl.cluster, "a"), res(TypeUrl.listener, "a")]),
    );
    const got = await source.get(TypeUrl.cluster, ["b", "missing", "a", "b"]);
    expect(got).toEqual([res(TypeUrl.cluster, "a"), res(TypeUrl.cluster, "b")]);
    expect(await source.get(TypeUrl.cluster, [])).toEqual([]);
  });

  it("lists every resource of one type, across pages", async () => {
    const many = Array.from({ length: 1005 }, (_, i) => res(TypeUrl.endpoint, `outbound|${i}||h`));
    const source = createStoreSource(await storeWith([...many, res(TypeUrl.cluster, "other")]));
    const listed = await source.list(TypeUrl.endpoint);
    expect(listed).toHaveLength(1005);
    expect(listed.map((r) => r.name)).toEqual(many.map((r) => r.name).sort());
    expect(listed.every((r) => r.typeUrl === TypeUrl.endpoint)).toBe(true);
  });

  it("reads each resource a push changed once for every stream, and only until the next push", async () => {
    const store = await storeWith([res(TypeUrl.endpoint, "a"), res(TypeUrl.endpoint, "b")]);
    const reads: string[][] = [];
    const counting: Store = {
      ...store,
      getMany: (ks, ...rest) => {
        reads.push([...ks]);
        return store.getMany(ks, ...rest);
      },
    };
    const source = createStoreSource(counting);
    await store.put(keys.resource(TypeUrl.endpoint, "a"), res(TypeUrl.endpoint, "a", "v2"));
    source.pushed([
      { typeUrl: TypeUrl.endpoint, name: "a", version: "v2" },
      { typeUrl: TypeUrl.endpoint, name: "gone", version: null },
    ]);
    for (let stream = 0; stream < 3; stream++) {
      expect(await source.get(TypeUrl.endpoint, ["a", "gone"])).toEqual([res(TypeUrl.endpoint, "a", "v2")]);
    }
    expect(reads).toHaveLength(1);
    // A name the push did not change is read from the store each time.
    await source.get(TypeUrl.endpoint, ["a", "b"]);
    await source.get(TypeUrl.endpoint, ["b"]);
    expect(reads.slice(1)).toEqual([
      [keys.resource(TypeUrl.endpoint, "b")],
      [keys.resource(TypeUrl.endpoint, "b")],
    ]);
    // The next push forgets the memo: a's newer bytes are read.
    await store.put(keys.resource(TypeUrl.endpoint, "a"), res(TypeUrl.endpoint, "a", "v3"));
    source.pushed([{ typeUrl: TypeUrl.endpoint, name: "a", version: "v3" }]);
    expect(await source.get(TypeUrl.endpoint, ["a"])).toEqual([res(TypeUrl.endpoint, "a", "v3")]);
    // A push that does not say what changed memoizes nothing.
    source.pushed(undefined);
    await source.get(TypeUrl.endpoint, ["a"]);
    await source.get(TypeUrl.endpoint, ["a"]);
    expect(reads).toHaveLength(6);
  });

  it("does not memoize a read that started before the push (it may hold the old bytes)", async () => {
    const store = await storeWith([res(TypeUrl.endpoint, "a")]);
    let release: (() => void) | undefined;
    const slow: Store = {
      ...store,
      getMany: async <T>(ks: readonly string[]) => {
        const got = await store.getMany<T>(ks);
        await new Promise<void>((r) => {
          release = r;
        });
        return got;
      },
    };
    const source = createStoreSource(slow);
    source.pushed([{ typeUrl: TypeUrl.endpoint, name: "a", version: "v1" }]);
    const before = source.get(TypeUrl.endpoint, ["a"]);
    await new Promise((r) => setImmediate(r));
    await store.put(keys.resource(TypeUrl.endpoint, "a"), res(TypeUrl.endpoint, "a", "v2"));
    source.pushed([{ typeUrl: TypeUrl.endpoint, name: "a", version: "v2" }]);
    release?.();
    expect(await before).toEqual([res(TypeUrl.endpoint, "a", "v1")]);
    const after = source.get(TypeUrl.endpoint, ["a"]);
    await new Promise((r) => setImmediate(r));
    release?.();
    expect(await after).toEqual([res(TypeUrl.endpoint, "a", "v2")]);
  });
});
