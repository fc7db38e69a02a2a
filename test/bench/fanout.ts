/**
 * Fan-out: how fast one endpoint change reaches many Delta ADS streams, and what each costs the
 * server. The server is its own process started as `npm start` starts it (npm-start.ts: the
 * compiled dist/ server with package.json's node flags, no TypeScript loader), real ingest HTTP,
 * real h2c gRPC; the streams are real connect-node gRPC clients in another process
 * (fanout-clients.ts), which also POSTs each change and times it, so the CPU per stream per push is
 * the server's alone (its process.cpuUsage, read by fanout-probe.mjs). EDS debounce off
 * (PILOT_ENABLE_EDS_DEBOUNCE=false), so the push follows the POST at once. Each change is posted
 * only once the previous one's ACKs have drained (the server's event loop is idle again). The
 * figures are those of a running server: FANOUT_WARMUP (default 20) changes go first, and their CPU
 * is reported apart (a fresh process's first pushes also pay V8 compiling the push and ACK paths).
 * FANOUT_CPU_PROFILE=<file.cpuprofile> writes the server's CPU profile of the changes alone
 * (FANOUT_PROFILE_INTERVAL_US: its sampling interval, default 1000 µs);
 * FANOUT_HEAP_PROFILE=<file.heapprofile> its sampling heap profile of them (garbage included;
 * FANOUT_HEAP_OLD=1: only what outlived a scavenge, the old generation's share).
 * `npx tsx test/bench/fanout.ts 1000 both` measures the server, then the transport floor with the
 * same clients and changes (fanout-floor.ts; its profiles are written beside, tagged `.floor`).
 */
import { type ChildProcess, execFileSync, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { FromClients, ToClients } from "./fanout-clients.ts";
import { type StartedFloor, startFloor } from "./fanout-floor.ts";
import { serviceEvents, sliceEvent } from "./mesh.ts";
import { ask, type StartedServer, startServer } from "./npm-start.ts";

export interface FanoutReport {
  streams: number;
  p50Ms: number;
  p99Ms: number;
  /** The server process's CPU (process.cpuUsage) per stream per push, in µs, after the warm-up changes. */
  cpuPerStreamUs: number;
  /**
   * The same over the warm-up changes, the first the process served: they also pay its one-time
   * costs (V8 compiling the push and ACK paths as they get hot, first allocations), not per push.
   */
  coldCpuPerStreamUs: number;
  /** Median ingest POST latency of the changes (ms). */
  postMs: number;
}

/** POSTs events to the runtime's ingest; resolves with the answer's latency (ms). */
export async function postEvents(port: number, events: unknown[]): Promise<number> {
  const t = performance.now();
  const res = await fetch(`http://127.0.0.1:${port}/v1/events`, {
    method: "POST",
    body: JSON.stringify(events),
    headers: { "content-type": "application/json" },
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`ingest answered ${res.status}: ${text.slice(0, 300)}`);
  return performance.now() - t;
}

/** Resolves once this process's event loop is idle: two 10 ms timers in a row fire on time. */
export async function settled(maxMs = 2000): Promise<void> {
  const until = performance.now() + maxMs;
  let calm = 0;
  while (calm < 2 && performance.now() < until) {
    const t = performance.now();
    await new Promise((r) => setTimeout(r, 10));
    calm = performance.now() - t < 13 ? calm + 1 : 0;
  }
}

/** The clients' process, and a way to wait for its next message of a kind. */
export interface Clients {
  child: ChildProcess;
  next<K extends FromClients["kind"]>(kind: K): Promise<Extract<FromClients, { kind: K }>>;
  send(m: ToClients): void;
  stop(): Promise<void>;
}

/** Forks fanout-clients.ts: `streams` Delta streams on `runtime`, the target among `services` (of namespace `ns`). */
export function forkClients(
  runtime: { port: number; xdsPort: number },
  streams: number,
  services: number,
  ns?: string,
): Clients {
  const script = fileURLToPath(new URL("./fanout-clients.ts", import.meta.url));
  const child = fork(
    script,
    [...[runtime.xdsPort, runtime.port, streams, services].map(String), ...(ns ? [ns] : [])],
    {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    },
  );
  // Messages nobody waits for yet are kept for the next wait of their kind.
  const waiting = new Map<string, (m: FromClients) => void>();
  const early = new Map<string, FromClients>();
  let failure: Error | undefined;
  child.on("message", (m: FromClients) => {
    if (m.kind === "failed") failure = new Error(`a client stream failed: ${m.message}`);
    const w = waiting.get(m.kind);
    if (w) {
      waiting.delete(m.kind);
      w(m);
    } else early.set(m.kind, m);
  });
  let gone = false;
  const exited = new Promise<void>((r) =>
    child.once("exit", () => {
      gone = true;
      for (const w of waiting.values()) w({ kind: "failed", message: "the clients' process exited" });
      waiting.clear();
      r();
    }),
  );
  return {
    child,
    next(kind) {
      if (failure) return Promise.reject(failure);
      const got = early.get(kind);
      if (got) {
        early.delete(kind);
        return Promise.resolve(got as Extract<FromClients, { kind: typeof kind }>);
      }
      if (gone) return Promise.reject(failure ?? new Error("the clients' process exited"));
      return new Promise((resolve, reject) => {
        waiting.set(kind, (m) => {
          if (m.kind === "failed" && kind !== "failed") reject(failure ?? new Error(m.message));
          else resolve(m as Extract<FromClients, { kind: typeof kind }>);
        });
      });
    },
    send: (m) => child.send(m),
    async stop() {
      if (child.connected) child.send({ kind: "stop" });
      const killer = setTimeout(() => child.kill(), 3000);
      await exited;
      clearTimeout(killer);
    },
  };
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))] as number;
}

/** Endpoint changes the server serves before the measured ones (FANOUT_WARMUP overrides). */
export const warmupChanges = Number(process.env.FANOUT_WARMUP ?? 20);

/**
 * `streams` Delta streams, each subscribed to the EDS of 3 of `services` services (one of them the
 * target), then `warmup` endpoint changes of the target and `changes` more that are measured, one at
 * a time (latencies, POSTs and CPU per stream per push come from the measured ones; the warm-up's
 * CPU is reported apart as `coldCpuPerStreamUs`). `floor`: the same clients and changes against the
 * transport floor (fanout-floor.ts: bare node:http2 writing the bytes the server would write for
 * each change) instead of the server.
 */
export async function measureFanout(
  streams: number,
  services = 100,
  changes = 20,
  floor = false,
  warmup = warmupChanges,
): Promise<FanoutReport> {
  const server: StartedServer & { prepare?: StartedFloor["prepare"] } = floor
    ? await startFloor(services)
    : await startServer("fanout-probe.mjs");
  const clients = forkClients(server, streams, services);
  const serverSettled = async () => (await ask<{ cpu: number }>(server.child, { kind: "settled" })).cpu;
  try {
    if (!floor) {
      const batch: unknown[] = [];
      for (let n = 0; n < services; n++) batch.push(...serviceEvents(n));
      await postEvents(server.port, batch);
    }
    await clients.next("ready");
    await serverSettled();
    /** Changes `from` to `from + count - 1`, one at a time: their latencies, POST latencies and server CPU. */
    const run = async (from: number, count: number) => {
      const out = { latencies: [] as number[], posts: [] as number[], cpu: 0 };
      for (let c = from; c < from + count; c++) {
        const ips = [`10.250.${c % 250}.1`, `10.250.${c % 250}.2`];
        const event = sliceEvent(0, ips, "MODIFIED");
        await server.prepare?.(event);
        const posted = clients.next("posted");
        const seen = clients.next("seen");
        const cpuStart = await serverSettled();
        clients.send({ kind: "post", change: c, events: [event] });
        out.posts.push((await posted).postMs);
        out.latencies.push((await seen).latencyMs);
        // The ACKs of this change are the server's work too: count them, then let them drain.
        out.cpu += (await serverSettled()) - cpuStart;
      }
      return out;
    };
    const perStreamPush = (cpu: number, count: number) =>
      streams === 0 || count === 0 ? 0 : cpu / streams / count;
    const cold = await run(0, warmup);
    const profile = process.env.FANOUT_CPU_PROFILE;
    const heapProfile = process.env.FANOUT_HEAP_PROFILE;
    const tag = (file: string) => (floor ? file.replace(/(\.[a-z]+)?$/, ".floor$1") : file);
    if (profile) await ask(server.child, { kind: "profile-start" });
    if (heapProfile) await ask(server.child, { kind: "heap-start" });
    const { latencies, posts, cpu } = await run(warmup, changes);
    if (profile) await ask(server.child, { kind: "profile-stop", file: tag(profile) });
    if (heapProfile) await ask(server.child, { kind: "heap-stop", file: tag(heapProfile) });
    return {
      streams,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      cpuPerStreamUs: perStreamPush(cpu, changes),
      coldCpuPerStreamUs: perStreamPush(cold.cpu, warmup),
      postMs: percentile(posts, 50),
    };
  } finally {
    await clients.stop();
    await server.stop();
  }
}

/**
 * measureFanout in a fresh process: the server's heap then holds only this measurement, not what
 * earlier bench sections left for the garbage collector.
 */
export function measureFanoutAlone(streams: number, floor = false): FanoutReport {
  const out = execFileSync(
    process.execPath,
    ["--import", "tsx", fileURLToPath(import.meta.url), String(streams), ...(floor ? ["floor"] : [])],
    {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  return JSON.parse(out.trim().split("\n").at(-1) ?? "") as FanoutReport;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // argv: stream counts (default 100,1000), then `floor` for the transport floor alone, `both` for
  // the server then the floor (each line tagged with `floor`).
  const mode = process.argv[3];
  for (const n of (process.argv[2] ?? "100,1000").split(",").map(Number)) {
    if (mode !== "floor") console.log(JSON.stringify(await measureFanout(n)));
    if (mode === "floor" || mode === "both")
      console.log(JSON.stringify({ floor: true, ...(await measureFanout(n, 100, 20, true)) }));
  }
}
