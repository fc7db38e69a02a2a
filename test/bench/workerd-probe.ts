/**
 * A local Worker for the benches, and probes of a workerd process started by wrangler's unstable_dev, for test/bench/do-capacity.ts:
 * /proc figures (RSS, CPU), the isolate's heap through the inspector, the Worker's log lines, and
 * the Durable Object's SQLite files once it stopped.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "libsql";
import { type Unstable_DevWorker, unstable_dev } from "wrangler";
import type { PushVersion } from "../../lib/resources/changes.ts";
import { decodeValue } from "../../lib/store/codec.ts";
import { keys } from "../../lib/store/keys.ts";
import { prefixUpperBound } from "../../lib/store/sql.ts";

/**
 * Keeps wrangler's unstable_dev on this machine: miniflare fetches the `Request.cf` object from
 * workers.cloudflare.com unless CLOUDFLARE_CF_FETCH_ENABLED=false, and wrangler may send usage
 * metrics unless WRANGLER_SEND_METRICS=false. Call before unstable_dev.
 */
export function stayOffline(): void {
  process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";
  process.env.WRANGLER_SEND_METRICS = "false";
}

/** A local Worker (wrangler.toml, offline, its Durable Object persisted in a fresh directory) with `vars`; stop() removes the directory. */
export async function startLocalWorker(
  name: string,
  vars: Record<string, string>,
): Promise<{ worker: Unstable_DevWorker; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), `edgepilot-${name}-`));
  stayOffline();
  const worker = await unstable_dev("functions/workers/index.ts", {
    config: "wrangler.toml",
    local: true,
    persistTo: dir,
    logLevel: "warn",
    vars,
    experimental: { disableExperimentalWarning: true, watch: false },
  });
  return {
    worker,
    async stop() {
      await worker.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The Worker's workerd process(es) started by this process (miniflare spawns workerd as a direct child). */
export function workerdChildren(): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) !== process.pid || !stat.includes("(workerd)")) continue;
      // wrangler runs two: its dev proxy, and the Worker's runtime (the one with an inspector).
      if (readFileSync(`/proc/${name}/cmdline`, "utf8").includes("--inspector-addr")) out.push(Number(name));
    } catch {
      // the process ended meanwhile
    }
  }
  return out;
}

export const statusMb = (pid: number, field: "VmRSS" | "VmHWM") => {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : Number.NaN;
};

/** utime + stime of the process (ms); clock ticks are 100 Hz on Linux. */
export const cpuMs = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
};

interface WsLike {
  on(event: "open" | "message" | "error", f: (data: unknown) => void): void;
  send(text: string): void;
  close(): void;
}

/** A Chrome DevTools Protocol session on the worker's isolate, through wrangler's inspector proxy. */
export async function inspector(port: number) {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  const url = targets[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error("no inspector target");
  // ws comes with miniflare (wrangler's local runtime), resolved through it.
  const require = createRequire(createRequire(import.meta.url).resolve("miniflare"));
  const WebSocket = require("ws") as new (url: string, options: object) => WsLike;
  const ws = new WebSocket(url, { headers: { origin: "https://devtools.devprod.cloudflare.dev" } });
  await new Promise<void>((resolve, reject) => {
    ws.on("open", () => resolve());
    ws.on("error", reject);
  });
  let id = 0;
  const waiting = new Map<number, (r: unknown) => void>();
  ws.on("message", (data) => {
    const msg = JSON.parse(String(data)) as { id?: number; result?: unknown };
    if (msg.id !== undefined) waiting.get(msg.id)?.(msg.result);
  });
  const call = (method: string, params: object = {}) =>
    new Promise<unknown>((resolve, reject) => {
      const n = ++id;
      const timer = setTimeout(() => reject(new Error(`inspector: ${method} unanswered after 30s`)), 30_000);
      waiting.set(n, (r) => {
        clearTimeout(timer);
        resolve(r);
      });
      ws.send(JSON.stringify({ id: n, method, params }));
    });
  // Nothing is answered before Runtime.enable (workerd does not implement HeapProfiler.collectGarbage).
  await call("Runtime.enable");
  // workerd does not answer HeapProfiler.collectGarbage: heap figures include uncollected garbage.
  return {
    /** V8 heap in use, garbage not yet collected included (MB). */
    async heapMb(): Promise<number> {
      const r = (await call("Runtime.getHeapUsage")) as { usedSize: number };
      return r.usedSize / 1024 / 1024;
    },
    /** V8 heap committed (MB): it grows to what the largest moment needed and shrinks late. */
    async committedMb(): Promise<number> {
      const r = (await call("Runtime.getHeapUsage")) as { totalSize: number };
      return r.totalSize / 1024 / 1024;
    },
    close: () => ws.close(),
  };
}

/** Worker log lines (wrangler writes the worker's console to this process's stdout and stderr). */
export function captureLog(): { lines: { at: number; text: string }[]; stop(): void } {
  const lines: { at: number; text: string }[] = [];
  const streams = [process.stdout, process.stderr];
  const writes = streams.map((s) => s.write.bind(s));
  streams.forEach((stream, i) => {
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString();
      const at = performance.now();
      for (const line of text.split("\n")) if (line.trim()) lines.push({ at, text: line });
      if (process.env.CAPACITY_VERBOSE)
        return (writes[i] as (c: unknown, ...r: unknown[]) => boolean)(chunk, ...rest);
      return true;
    }) as typeof stream.write;
  });
  return {
    lines,
    stop: () => {
      streams.forEach((stream, i) => {
        stream.write = writes[i] as typeof stream.write;
      });
    },
  };
}

/** The object's SQLite files (workerd persists one per Durable Object): total size, largest value in bytes. */
export function sqliteFacts(dir: string): {
  sqliteMb: number;
  largestValue: { key: string; kb: number };
  pushVersion: number;
  queued: number;
} {
  const files: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.sqlite(-wal)?$/.test(e.name)) files.push(p);
    }
  };
  walk(dir);
  // Sizes first: opening a database below may fold its write-ahead log away.
  const bytes = files.reduce((sum, p) => sum + (statSync(p, { throwIfNoEntry: false })?.size ?? 0), 0);
  let largestValue = { key: "", kb: 0 };
  let pushVersion = 0;
  let queued = 0;
  for (const p of files.filter((f) => f.endsWith(".sqlite"))) {
    const db = new Database(p, { readonly: true });
    try {
      const top = db
        .prepare("SELECT key, length(CAST(value AS BLOB)) AS n FROM kv ORDER BY n DESC LIMIT 1")
        .get() as { key: string; n: number } | undefined;
      if (top && top.n / 1024 > largestValue.kb) largestValue = { key: top.key, kb: top.n / 1024 };
      const version = db.prepare("SELECT value FROM kv WHERE key = ?").get(keys.pushVersion()) as
        | { value: string }
        | undefined;
      if (version) pushVersion = decodeValue<PushVersion>(version.value).version;
      const prefix = keys.pendingPrefix();
      queued += (
        db
          .prepare("SELECT count(*) AS n FROM kv WHERE key >= ? AND key < ?")
          .get(prefix, prefixUpperBound(prefix)) as { n: number }
      ).n;
    } catch {
      // not the mesh's database (no kv table)
    } finally {
      db.close();
    }
  }
  return { sqliteMb: bytes / 1024 / 1024, largestValue, pushVersion, queued };
}
