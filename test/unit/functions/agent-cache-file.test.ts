/**
 * The agent's disk cache file (functions/node/agent-cache-file.ts) on a real directory: saves are
 * debounced and atomic, a saved file loads back whole, a corrupt one is logged, removed and never
 * used, a foreign one is set aside, an oversized cache is not written, and a directory the agent
 * cannot use is a start-up error naming EDGEPILOT_AGENT_CACHE_DIR. Timers are faked: nothing sleeps.
 */
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cacheFileName, heldVersions, openCacheFile } from "../../../functions/node/agent-cache-file.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";

const identity = { namespace: "shop", upstream: "https://cp:15012" };
let dir: string;
let lines: string[];
const log = (l: string) => lines.push(l);
const open = (o: { maxBytes?: number; namespace?: string } = {}) =>
  openCacheFile({
    dir,
    identity: { ...identity, ...(o.namespace && { namespace: o.namespace }) },
    log,
    saveAfterMs: 1000,
    ...(o.maxBytes && { maxBytes: o.maxBytes }),
  });
const res = (name: string, version: string, size = 8) => ({
  name,
  version,
  body: new Uint8Array(size).fill(version.length),
});

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "edgepilot-cache-"));
  lines = [];
});
afterEach(() => {
  vi.useRealTimers();
  rmSync(dir, { recursive: true, force: true });
});

describe("agent disk cache file", () => {
  it("saves debounced, atomically, and loads back what was cached (removals included)", async () => {
    vi.useFakeTimers();
    const a = open();
    expect(a.loaded).toBeUndefined();
    expect(lines.join("\n")).toMatch(/none yet/);
    a.record(TypeUrl.cluster, [res("c1", "v1"), res("c2", "v2")], []);
    a.record(TypeUrl.cluster, [res("c1", "v1b")], ["c2"]);
    a.record(TypeUrl.endpoint, [res("e1", "w1", 100)], []);
    expect(existsSync(a.path)).toBe(false); // not on every change
    await vi.advanceTimersByTimeAsync(1000);
    await a.flush();
    expect(readdirSync(dir)).toEqual([cacheFileName]); // no temporary file left
    const b = open();
    expect(b.loaded?.resources).toBe(2);
    expect(heldVersions(b.loaded)).toEqual(
      new Map([
        [TypeUrl.cluster, new Map([["c1", "v1b"]])],
        [TypeUrl.endpoint, new Map([["e1", "w1"]])],
      ]),
    );
    expect(b.loaded?.snapshot.get(TypeUrl.endpoint)?.get("e1")?.body).toEqual(new Uint8Array(100).fill(2));
    expect(lines.at(-1)).toMatch(/loaded 2 resources saved at .*served from it until the upstream answers/);
    // A later agent keeps what it loaded and saves over it.
    b.record(TypeUrl.cluster, [res("c3", "v3")], []);
    await b.flush();
    expect(open().loaded?.resources).toBe(3);
  });

  it("ignores and removes a corrupt file, never using part of it", async () => {
    const a = open();
    a.record(TypeUrl.cluster, [res("c1", "v1"), res("c2", "v2")], []);
    await a.flush();
    const whole = readFileSync(a.path);
    writeFileSync(a.path, whole.subarray(0, whole.length - 5));
    expect(open().loaded).toBeUndefined();
    expect(lines.at(-1)).toMatch(/ignored \(corrupt: .*truncated.*\); starting with an empty cache/);
    expect(existsSync(a.path)).toBe(false);
  });

  it("sets aside a foreign file (another namespace's) until it saves its own", () => {
    const a = open({ namespace: "web" });
    a.record(TypeUrl.cluster, [res("c1", "v1")], []);
    return a.flush().then(() => {
      expect(open().loaded).toBeUndefined();
      expect(lines.at(-1)).toMatch(/ignored \(foreign: cached for namespace "web"/);
      expect(existsSync(a.path)).toBe(true);
    });
  });

  it("does not write a cache over its bound, and drops the old file", async () => {
    const a = open({ maxBytes: 4096 });
    a.record(TypeUrl.cluster, [res("c1", "v1")], []);
    await a.flush();
    expect(existsSync(a.path)).toBe(true);
    a.record(TypeUrl.cluster, [res("big", "v2", 8192)], []);
    await a.flush();
    expect(existsSync(a.path)).toBe(false);
    expect(lines.at(-1)).toMatch(/over 4096 bytes; not saved, and the old file removed/);
  });

  it("refuses a directory it cannot use, naming the variable", () => {
    expect(() => openCacheFile({ dir: join(dir, "missing"), identity, log })).toThrow(
      /EDGEPILOT_AGENT_CACHE_DIR=.*missing.*: not a writable directory \(ENOENT\)/,
    );
    if (process.getuid?.() !== 0) {
      chmodSync(dir, 0o500);
      expect(() => openCacheFile({ dir, identity, log })).toThrow(/not a writable directory \(EACCES\)/);
      chmodSync(dir, 0o700);
    }
  });
});
