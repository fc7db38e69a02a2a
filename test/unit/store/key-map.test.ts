/**
 * The memory store's and the staged view's key map: it answers as a Map does across its split into
 * shards, and its hash spreads the keys a mesh stores evenly enough that no shard holds many more
 * than its share (a shard's growth is the longest step the map can take).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createKeyMap, keyHash, splitAt } from "../../../lib/store/key-map.ts";
import { keys } from "../../../lib/store/keys.ts";

type Op = { op: "set" | "delete"; key: string; value: number };
type Box = { n: number };

describe("key map", () => {
  it("answers as a Map, below and above the size where it splits, and while its keys move", () => {
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
      fc.property(
        // Past the split by 10 keys: its keys are still moving to the shards (one per operation);
        // past twice the split: all moved.
        fc.constantFrom(0, 10, splitAt - 1, splitAt + 10, 2 * splitAt + 10),
        fc.array(opArb, { maxLength: 200 }),
        (filled, ops) => {
          const map = createKeyMap<Box>();
          const model = new Map<string, Box>();
          for (let i = 0; i < filled; i++) {
            const box = { n: i };
            map.set(`svc/ns/host-${i}`, box);
            model.set(`svc/ns/host-${i}`, box);
          }
          for (const { op, key, value } of ops) {
            if (op === "set") {
              const box = { n: value };
              map.set(key, box);
              model.set(key, box);
            } else expect(map.delete(key)).toBe(model.delete(key));
            expect(map.size).toBe(model.size);
          }
          for (const { key } of ops) {
            expect(map.get(key)).toBe(model.get(key));
            expect(map.has(key)).toBe(model.has(key));
          }
          for (let i = 0; i < filled; i += 997)
            expect(map.get(`svc/ns/host-${i}`)).toBe(model.get(`svc/ns/host-${i}`));
        },
      ),
      { numRuns: 20 },
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
