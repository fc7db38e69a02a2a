/**
 * The memory store's and the staged view's key map: it answers as a Map does across its split into
 * shards, and its hash spreads the keys a mesh stores evenly enough that no shard holds many more
 * than its share (a shard's growth is the longest step the map can take).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createKeyMap, keyHash } from "../../../lib/store/key-map.ts";
import { keys } from "../../../lib/store/keys.ts";

type Op = { op: "set" | "delete"; key: string; value: number };

describe("key map", () => {
  it("answers as a Map, below and above the size where it splits", () => {
    const keyArb = fc.oneof(
      fc.string({ maxLength: 3 }),
      fc.nat(20_000).map((n) => `obj/c/Pod/ns/pod-${n}`),
    );
    const opArb: fc.Arbitrary<Op> = fc.record({
      op: fc.constantFrom("set", "set", "delete"),
      key: keyArb,
      value: fc.nat(),
    });
    // A prefix of many distinct keys takes the map past its split before the random operations.
    fc.assert(
      fc.property(fc.nat(12_000), fc.array(opArb, { maxLength: 200 }), (filled, ops) => {
        const map = createKeyMap<number>();
        const model = new Map<string, number>();
        for (let i = 0; i < filled; i++) {
          map.set(`svc/ns/host-${i}`, i);
          model.set(`svc/ns/host-${i}`, i);
        }
        for (const { op, key, value } of ops) {
          if (op === "set") {
            map.set(key, value);
            model.set(key, value);
          } else expect(map.delete(key)).toBe(model.delete(key));
          expect(map.size).toBe(model.size);
        }
        for (const { key } of ops) {
          expect(map.get(key)).toBe(model.get(key));
          expect(map.has(key)).toBe(model.has(key));
        }
        expect(map.get(`svc/ns/host-${filled - 1}`)).toBe(model.get(`svc/ns/host-${filled - 1}`));
      }),
      { numRuns: 30 },
    );
  });

  it("spreads a mesh's keys over 64 shards, none over twice its share", () => {
    const mesh: string[] = [];
    for (let s = 0; s < 20_000; s++) {
      const host = `svc-${s}.bench.svc.cluster.local`;
      mesh.push(
        keys.service("bench", host, "Kubernetes"),
        keys.shards("bench", host),
        keys.object("Kubernetes", "Service", "bench", `svc-${s}`),
        keys.object("Kubernetes", "EndpointSlice", "bench", `svc-${s}-abcde`),
      );
      mesh.push(keys.slice("bench", host, "Kubernetes", `svc-${s}-abcde`));
      for (let p = 0; p < 3; p++)
        mesh.push(
          keys.object("Kubernetes", "Pod", "bench", `svc-${s}-${p}`),
          keys.pod("Kubernetes", "bench", `svc-${s}-${p}`),
        );
    }
    const shards = new Array<number>(64).fill(0);
    for (const key of mesh) shards[keyHash(key) & 63] = (shards[keyHash(key) & 63] as number) + 1;
    expect(Math.max(...shards)).toBeLessThan((2 * mesh.length) / 64);
  });
});
