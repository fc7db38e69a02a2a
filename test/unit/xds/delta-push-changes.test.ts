/**
 * Delta pushes that name what changed (what the Node runtime's push signal carries): the session
 * re-diffs only those names, and must answer exactly what a full re-diff answers.
 */
import { describe, expect, it } from "vitest";
import type { ResourceChange } from "../../../lib/resources/changes.ts";
import type { SyncGate } from "../../../lib/resources/sync-gate.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { setVersion } from "../../../lib/resources/version.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { createDeltaSession } from "../../../lib/xds/delta.ts";
import { createStoreSource, type ResourceSource } from "../../../lib/xds/source.ts";
import { ack, harness, nack, req, summary } from "./delta-harness.ts";

const { cluster: CDS, endpoint: EDS, listener: LDS } = TypeUrl;

/** Two sessions in lockstep over two stores: one pushed full re-diffs, one pushed only the changes. */
function pair(gate?: SyncGate) {
  const full = harness(gate);
  const aware = harness(gate);
  let changes: ResourceChange[] = [];
  return {
    full,
    aware,
    async publish(typeUrl: TypeUrl, name: string, version = "v1") {
      await full.publish(typeUrl, name, version);
      await aware.publish(typeUrl, name, version);
      changes.push({ typeUrl, name, version });
    },
    async remove(typeUrl: TypeUrl, name: string) {
      await full.remove(typeUrl, name);
      await aware.remove(typeUrl, name);
      changes.push({ typeUrl, name, version: null });
    },
    /** Pushes both; returns both answers. */
    async push() {
      const pushed = changes;
      changes = [];
      const a = await full.session.onPush();
      const b = await aware.session.onPush(undefined, pushed);
      return { full: a, aware: b };
    },
  };
}

describe("Delta push with the changes named", () => {
  it("answers a named subscriber exactly as a full re-diff: updates, removals, NACKs, unrelated changes", async () => {
    const p = pair();
    await p.publish(EDS, "a");
    await p.publish(EDS, "b");
    await p.publish(EDS, "other");
    const sub = req({ typeUrl: EDS, resourceNamesSubscribe: ["a", "b", "missing"] });
    const [f0] = await p.full.session.onRequest(sub);
    const [a0] = await p.aware.session.onRequest(sub);
    expect(summary([a0])).toEqual(summary([f0]));
    await p.full.session.onRequest(ack(f0));
    await p.aware.session.onRequest(ack(a0));
    const steps: (() => Promise<unknown>)[] = [
      () => p.publish(EDS, "other", "v2"), // out of reach: nothing
      () => p.publish(EDS, "a", "v2"),
      () => p.remove(EDS, "b"),
      () => p.publish(EDS, "missing"),
      () => p.publish(EDS, "a", "v2"), // same version again: nothing
    ];
    for (const step of steps) {
      await step();
      const { full, aware } = await p.push();
      expect(summary(aware)).toEqual(summary(full));
      expect(aware.map((r) => r.systemVersionInfo)).toEqual(full.map((r) => r.systemVersionInfo));
      for (const r of full) await p.full.session.onRequest(ack(r));
      for (const r of aware) await p.aware.session.onRequest(ack(r));
    }
    // A NACKed version is not resent on a later push that names it, until it changes.
    await p.publish(EDS, "a", "v3");
    const bad = await p.push();
    await p.full.session.onRequest(nack(bad.full[0]));
    await p.aware.session.onRequest(nack(bad.aware[0]));
    await p.publish(EDS, "b", "v1");
    const after = await p.push();
    expect(summary(after.aware)).toEqual(summary(after.full));
    expect(summary(after.aware)).toEqual(["eds +b@v1"]);
    expect(p.aware.session.status()).toEqual(p.full.session.status());
  });

  it("a wildcard subscriber sees names added and removed; types the push does not touch stay silent", async () => {
    const p = pair();
    await p.publish(CDS, "c1");
    await p.publish(LDS, "l1");
    for (const t of [CDS, LDS]) {
      const r = req({ typeUrl: t });
      const [f] = await p.full.session.onRequest(r);
      const [a] = await p.aware.session.onRequest(r);
      await p.full.session.onRequest(ack(f));
      await p.aware.session.onRequest(ack(a));
    }
    await p.publish(CDS, "c2");
    await p.remove(CDS, "c1");
    const { full, aware } = await p.push();
    expect(summary(aware)).toEqual(["cds +c2@v1", "cds -c1"]);
    expect(summary(aware)).toEqual(summary(full));
  });

  it("holds removals while the gate is closed; the full push after it opens sends them", async () => {
    let open = false;
    const gate: SyncGate = { synced: async () => open };
    const h = harness(gate);
    await h.publish(EDS, "a");
    await h.publish(EDS, "b");
    const [r] = await h.session.onRequest(req({ typeUrl: EDS, resourceNamesSubscribe: ["a", "b"] }));
    await h.session.onRequest(ack(r));
    await h.remove(EDS, "b");
    await h.publish(EDS, "a", "v2");
    const changed: ResourceChange[] = [
      { typeUrl: EDS, name: "a", version: "v2" },
      { typeUrl: EDS, name: "b", version: null },
    ];
    const held = await h.session.onPush(undefined, changed);
    expect(summary(held)).toEqual(["eds +a@v2"]);
    await h.session.onRequest(ack(held[0]));
    open = true;
    // The gate opening announces no changes: a full re-diff.
    expect(summary(await h.session.onPush())).toEqual(["eds -b"]);
  });

  it("answers from the change feed's bytes without reading the store, whatever the client holds", async () => {
    const store = createMemoryStore();
    const inner = createStoreSource(store);
    const reads: string[] = [];
    const source: ResourceSource = {
      get(t, names) {
        reads.push(...names);
        return inner.get(t, names);
      },
      list(t) {
        reads.push(`list ${t}`);
        return inner.list(t);
      },
    };
    const stored = (name: string, version: string): StoredResource => ({
      typeUrl: EDS,
      name,
      version,
      body: new TextEncoder().encode(`${name}@${version}`),
      service: "ns/h",
    });
    const names = Array.from({ length: 200 }, (_, i) => `e${i}`);
    for (const name of names) await store.put(keys.resource(EDS, name), stored(name, "v1"));
    let n = 0;
    const session = createDeltaSession({ source, nonce: () => `n${++n}` });
    const [first] = await session.onRequest(req({ typeUrl: EDS, resourceNamesSubscribe: names }));
    await session.onRequest(ack(first));
    reads.length = 0;
    // The feed carries e7@v2 (bytes and all) and e9's removal; the store is not touched.
    const pushed = await session.onPush(undefined, [
      { ...stored("e7", "v2") },
      { typeUrl: EDS, name: "e9", version: null },
      { ...stored("unsubscribed", "v1") },
    ]);
    expect(summary(pushed)).toEqual(["eds +e7@v2", "eds -e9"]);
    expect(reads).toEqual([]);
    for (const r of pushed) await session.onRequest(ack(r));
    expect(reads).toEqual([]);
    const held = names.filter((x) => x !== "e9").map((x) => ({ name: x, version: x === "e7" ? "v2" : "v1" }));
    expect(session.status().types[0]?.ackedVersion).toBe(await setVersion(held));
    expect(pushed.at(-1)?.systemVersionInfo).toBe(await setVersion(held));
  });
});
