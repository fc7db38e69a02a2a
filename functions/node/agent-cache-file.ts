/**
 * The agent's last good configuration on disk (EDGEPILOT_AGENT_CACHE_DIR): loaded once at start,
 * saved debounced as the cache changes and at stop (SIGTERM). It mirrors the agent's cache (what
 * the upstream sent, whatever its kind), so it hooks into the cache writes and not into a stream.
 *
 * Saving is atomic: the snapshot is written whole to a temporary file in the same directory,
 * fsynced, then renamed over the file, so a reader (the next agent) sees the old file or the new
 * one, never a part. A snapshot larger than `maxBytes` is not written and the old file is removed
 * (it no longer is the last good configuration). Loading never throws for the file's content: a
 * corrupt, truncated, oversized or foreign file is logged and ignored whole (lib/agent/cache-snapshot.ts).
 */
import { accessSync, constants, readFileSync, rmSync, statSync } from "node:fs";
import { open, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import {
  type CacheIdentity,
  type CacheSnapshot,
  decodeSnapshot,
  encodeSnapshot,
} from "../../lib/agent/cache-snapshot.ts";
import { logError, logWarn } from "../../lib/log/line-log.ts";
import { logSafe } from "../../lib/log-safe.ts";
import type { StoredResource } from "../../lib/resources/types.ts";
import type { TypeUrl } from "../../lib/resources/xds-types.ts";
import { keys } from "../../lib/store/keys.ts";
import type { Store } from "../../lib/store/store.ts";
import { nodeSha256 } from "./sha256.ts";

/** The file's name inside the cache directory. */
export const cacheFileName = "edgepilot-agent.cache";

/** Where the file lives, whose it is, and its tunables (defaults are production's). */
export interface CacheFileOptions {
  dir: string;
  identity: CacheIdentity;
  log: (line: string) => void;
  /** A change is saved at most this long after it happened; changes meanwhile join it (default 2s). */
  saveAfterMs?: number;
  /** The largest file written or read (default 64 MiB). */
  maxBytes?: number;
}

/** What a usable file held at start. */
export interface LoadedCache {
  snapshot: CacheSnapshot;
  savedAt: string;
  resources: number;
}

/** The cache file of one agent. */
export interface CacheFile {
  /** The file's path. */
  path: string;
  /** What the file held at start, checked whole; undefined when there was none, or none usable. */
  loaded: LoadedCache | undefined;
  /** A cache change (as written to the agent's cache): saved within `saveAfterMs`. */
  record(
    typeUrl: string,
    upserts: readonly { name: string; version: string; body: Uint8Array }[],
    removed: readonly string[],
  ): void;
  /** Saves now what is not saved yet, and resolves once it is on disk (or failed, logged). */
  flush(): Promise<void>;
}

/**
 * Opens the cache file in `dir` and loads it. Throws (naming EDGEPILOT_AGENT_CACHE_DIR) when `dir`
 * is not a writable directory: that is a start-up error, the file's content never is.
 */
export function openCacheFile(options: CacheFileOptions): CacheFile {
  const { dir, identity, log } = options;
  const saveAfterMs = options.saveAfterMs ?? 2000;
  const maxBytes = options.maxBytes ?? 64 * 1024 * 1024;
  const path = join(dir, cacheFileName);
  const shown = logSafe(path);
  try {
    if (!statSync(dir).isDirectory()) throw new Error("not a directory");
    accessSync(dir, constants.W_OK | constants.R_OK);
  } catch (e) {
    throw new Error(
      `EDGEPILOT_AGENT_CACHE_DIR=${logSafe(dir)}: not a writable directory (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
  const loaded = load(path, identity, maxBytes, log);
  const mirror: CacheSnapshot = new Map();
  for (const [typeUrl, byName] of loaded?.snapshot ?? []) mirror.set(typeUrl, new Map(byName));
  const tmp = `${path}.${process.pid}.tmp`;
  let dirty = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let chain: Promise<void> = Promise.resolve();
  let tooBig = false;

  async function save(): Promise<void> {
    if (!dirty) return;
    dirty = false;
    const bytes = encodeSnapshot(mirror, identity, new Date().toISOString(), nodeSha256);
    if (bytes.length > maxBytes) {
      if (!tooBig)
        logWarn(
          log,
          `agent: cache file ${shown}: the cache (${bytes.length} bytes) is over ${maxBytes} bytes; not saved, and the old file removed`,
        );
      tooBig = true;
      await rm(path, { force: true });
      return;
    }
    tooBig = false;
    try {
      const f = await open(tmp, "w", 0o600);
      try {
        await f.writeFile(bytes);
        await f.sync();
      } finally {
        await f.close();
      }
      await rename(tmp, path);
    } catch (e) {
      dirty = true;
      logError(
        log,
        `agent: cache file ${shown}: cannot save (${logSafe(String(e))}); retried at the next change`,
      );
      await rm(tmp, { force: true }).catch(() => undefined);
    }
  }
  const queueSave = () => {
    chain = chain.then(save);
    return chain;
  };

  return {
    path,
    loaded,
    record(typeUrl, upserts, removed) {
      const byName = mirror.get(typeUrl) ?? new Map<string, { version: string; body: Uint8Array }>();
      mirror.set(typeUrl, byName);
      for (const r of upserts) byName.set(r.name, { version: r.version, body: r.body });
      for (const name of removed) byName.delete(name);
      if (byName.size === 0) mirror.delete(typeUrl);
      dirty = true;
      if (timer === undefined)
        timer = setTimeout(() => {
          timer = undefined;
          void queueSave();
        }, saveAfterMs);
    },
    flush() {
      clearTimeout(timer);
      timer = undefined;
      return queueSave();
    },
  };
}

/** The versions a loaded cache holds, per type URL, for initialAgentState (initial_resource_versions). */
export function heldVersions(loaded: LoadedCache | undefined): Map<string, Map<string, string>> {
  const held = new Map<string, Map<string, string>>();
  for (const [typeUrl, byName] of loaded?.snapshot ?? [])
    held.set(typeUrl, new Map([...byName].map(([name, r]) => [name, r.version])));
  return held;
}

/** Puts a loaded cache into the agent's cache store, before any local proxy is served. */
export async function restoreCache(store: Store, loaded: LoadedCache): Promise<void> {
  for (const [typeUrl, byName] of loaded.snapshot) {
    for (const [name, r] of byName) {
      const value: StoredResource = {
        typeUrl: typeUrl as TypeUrl,
        name,
        version: r.version,
        body: r.body,
        service: "",
      };
      await store.put(keys.resource(typeUrl as TypeUrl, name), value);
    }
  }
}

function load(
  path: string,
  identity: CacheIdentity,
  maxBytes: number,
  log: (line: string) => void,
): LoadedCache | undefined {
  const shown = logSafe(path);
  /** `why` is safe to log: built here or by decodeSnapshot from escaped parts. */
  const ignored = (why: string) => {
    logWarn(log, `agent: cache file ${shown}: ignored (${why}); starting with an empty cache`);
    return undefined;
  };
  let bytes: Uint8Array;
  try {
    const size = statSync(path).size;
    if (size > maxBytes) return ignored(`${size} bytes, over ${maxBytes}`);
    bytes = readFileSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") {
      log(`agent: cache file ${shown}: none yet; it is written once the upstream answered`);
      return undefined;
    }
    return ignored(`unreadable: ${logSafe(code ?? String(e))}`);
  }
  const decoded = decodeSnapshot(bytes, identity, nodeSha256);
  if (!decoded.ok) {
    // A foreign file is left alone until this agent saves over it; a corrupt one is removed now.
    if (!decoded.foreign) rmSync(path, { force: true });
    return ignored(`${decoded.foreign ? "foreign" : "corrupt"}: ${decoded.reason}`);
  }
  log(
    `agent: cache file ${shown}: loaded ${decoded.resources} resources saved at ${logSafe(decoded.savedAt)}; ` +
      "local proxies are served from it until the upstream answers",
  );
  return { snapshot: decoded.snapshot, savedAt: decoded.savedAt, resources: decoded.resources };
}
