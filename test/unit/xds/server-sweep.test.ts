/**
 * The xDS server sweeps expired proxy status records (written by its ADS streams and Poll NACKs)
 * from start() to stop() when its settings say so, and leaves live ones; a host whose store
 * expires them itself (sweep false) or that writes none (proxyStatus false) sweeps nothing.
 */
import { describe, expect, it } from "vitest";
import { createChangeFeed } from "../../../lib/core/change-feed.ts";
import { keys, listAll } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { createXdsServer, type XdsServerSettings } from "../../../lib/xds/server.ts";
import { createManualClock } from "../relay/manual-clock.ts";

describe("the xDS server's proxy status sweep", () => {
  const cases: { name: string; settings: XdsServerSettings; swept: boolean }[] = [
    { name: "sweeps by default", settings: {}, swept: true },
    { name: "not with sweep false", settings: { proxyStatus: { sweep: false } }, swept: false },
    { name: "not when it keeps no proxy status", settings: { proxyStatus: false }, swept: false },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const clock = createManualClock();
      const store = createMemoryStore();
      const record = (nodeId: string, expiresAt: number) => ({ nodeId, expiresAt });
      await store.put(keys.proxy("dead"), record("dead", -1));
      await store.put(keys.proxy("live"), record("live", 60_000));
      const core = { store, feed: createChangeFeed(() => {}) };
      const server = createXdsServer(core, { ...c.settings, log: () => {}, now: clock.now });
      server.start();
      await clock.settle();
      server.stop();
      const left = (await listAll(store, keys.proxyPrefix())).map((e) => e.key);
      expect(left).toEqual(c.swept ? [keys.proxy("live")] : [keys.proxy("dead"), keys.proxy("live")]);
    });
  }
});
