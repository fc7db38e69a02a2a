import { describe, expect, it } from "vitest";
import { maxListedResources, pushStatusItem, readPushStatus } from "../../../lib/debug/push-status.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { logEntry, NOW } from "./builders.ts";

describe("pushStatusItem", () => {
  it.each([
    {
      name: "an endpoint push",
      entry: logEntry(3),
      want: {
        version: 3,
        full: false,
        reason: { endpoint: 2 },
        configs: ["Service/default/reviews"],
        configsCount: 1,
        durationMs: 150,
        resourcesChanged: 1,
      },
    },
    {
      name: "a full push of unknown scope",
      entry: logEntry(4, {
        request: { full: true, configsUpdated: null, reasons: { global: 1 }, start: NOW },
      }),
      want: { full: true, configs: null, configsCount: 0 },
    },
    {
      name: "configs beyond the log's list are counted",
      entry: logEntry(5, {
        request: {
          full: true,
          configsUpdated: ["a"],
          configsCount: 1500,
          reasons: { config: 1500 },
          start: NOW,
        },
      }),
      want: { configs: ["a"], configsCount: 1500 },
    },
  ])("$name", ({ entry, want }) => {
    expect(pushStatusItem(entry)).toMatchObject(want);
  });

  it("says a refresh push was one, whatever it changed, and says nothing of the others", () => {
    const request = {
      full: true,
      configsUpdated: ["DestinationRule/default/reviews"],
      reasons: { config: 1 },
      start: NOW,
    };
    const refresh = pushStatusItem(logEntry(6, { request, changes: [], changeCount: 0, refresh: true }));
    expect(refresh).toMatchObject({
      version: 6,
      full: true,
      refresh: true,
      resourcesChanged: 0,
      resources: [],
    });
    // In the JSON, beside `full`: the first thing a reader of a Full push with nothing listed sees.
    expect(Object.keys(refresh).slice(0, 4)).toEqual(["version", "time", "full", "refresh"]);
    const endpoints = [
      { typeUrl: TypeUrl.endpoint, name: "outbound|9080||reviews.default.svc.cluster.local", version: "v1" },
    ];
    expect(
      pushStatusItem(logEntry(7, { request, changes: endpoints, changeCount: 1, refresh: true })).refresh,
    ).toBe(true);
    expect("refresh" in pushStatusItem(logEntry(8, { request }))).toBe(false);
    expect("refresh" in pushStatusItem(logEntry(9))).toBe(false);
  });

  it("lists at most maxListedResources changes and counts the rest", () => {
    const changes = Array.from({ length: maxListedResources + 7 }, (_, i) => ({
      typeUrl: TypeUrl.cluster,
      name: `c${i}`,
      version: null,
    }));
    const item = pushStatusItem(logEntry(1, { changes, changeCount: 2000 }));
    expect(item.resources).toHaveLength(maxListedResources);
    expect(item.resources[0]).toEqual({ type: TypeUrl.cluster, name: "c0", version: null });
    expect(item.resourcesOmitted).toBe(2000 - maxListedResources);
  });
});

describe("readPushStatus", () => {
  const seed = async (from: number, to: number) => {
    const store = createMemoryStore();
    for (let s = from; s <= to; s++) await store.put(keys.pushLog(s), logEntry(s));
    await store.put(keys.pushVersion(), { version: to, at: NOW });
    return store;
  };

  it("answers the newest first and pages back with before", async () => {
    const store = await seed(1, 5);
    const first = await readPushStatus(store, { limit: 2 });
    expect(first.status.pushVersion).toBe(5);
    expect(first.status.pushes.map((p) => p.version)).toEqual([5, 4]);
    expect(first.next).toBe(4);
    const last = await readPushStatus(store, { limit: 10, before: first.next });
    expect(last.status.pushes.map((p) => p.version)).toEqual([3, 2, 1]);
    expect(last.next).toBeUndefined();
  });

  it("stops where the log was trimmed", async () => {
    const store = await seed(4, 6);
    const r = await readPushStatus(store, { limit: 5 });
    expect(r.status.pushes.map((p) => p.version)).toEqual([6, 5, 4]);
    expect(r.next).toBeUndefined();
  });

  it("answers an empty log", async () => {
    expect(await readPushStatus(createMemoryStore(), { limit: 5 })).toEqual({
      status: { pushVersion: 0, pushes: [] },
    });
  });
});
