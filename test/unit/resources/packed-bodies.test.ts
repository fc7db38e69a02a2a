import { describe, expect, it } from "vitest";
import { maxPackedBytes, packBodies } from "../../../lib/resources/packed-bodies.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";

const resource = (name: string, bytes: number, fill: number): StoredResource => ({
  typeUrl: TypeUrl.cluster,
  name,
  version: `v-${name}`,
  body: new Uint8Array(bytes).fill(fill),
  service: "default/a.default.svc.cluster.local",
});

describe("packBodies", () => {
  it("copies the small bodies into one buffer, in order, each a view of exactly its bytes", () => {
    const given = [resource("a", 3, 1), resource("big", maxPackedBytes, 2), resource("b", 5, 3)];
    const packed = packBodies(given);
    expect(packed).toEqual(given);
    expect(packed[1]).toBe(given[1]); // a large body keeps its own buffer
    const [a, , b] = packed as [StoredResource, StoredResource, StoredResource];
    expect(a.body.buffer).toBe(b.body.buffer);
    expect(a.body.buffer.byteLength).toBe(8);
    expect([a.body.byteOffset, b.body.byteOffset]).toEqual([0, 3]);
    expect(Object.keys(a)).toEqual(Object.keys(given[0] as StoredResource));
  });

  it("leaves the resources given as they were", () => {
    const given = [resource("a", 3, 1), resource("b", 5, 3)];
    const bodies = given.map((r) => r.body);
    packBodies(given);
    expect(given.map((r) => r.body)).toEqual(bodies);
    expect(given[0]?.body).toBe(bodies[0]);
  });

  it("returns the list itself when fewer than two bodies are small", () => {
    for (const given of [[], [resource("a", 3, 1)], [resource("a", 3, 1), resource("big", 4096, 2)]])
      expect(packBodies(given)).toBe(given);
  });
});
