import { describe, expect, it } from "vitest";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { createStoreSource } from "../../../lib/xds/source.ts";

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
});
