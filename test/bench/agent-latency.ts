/**
 * The latency `edgepilot agent` adds to one endpoint change, beside the same change to proxies
 * connected directly to the Node edgepilot, in the same run. Three processes, so no figure is one
 * event loop's contention: the Node edgepilot as `npm start` runs it (npm-start.ts, EDS debounce
 * off), the agent as `npm run agent` runs it (tsx, its own process, upstream = that server), and the
 * clients (agent-latency-clients.ts: real connect-node Delta ADS streams, which also POST each change
 * and time it from the POST's start to the moment the LAST stream of the group holds the new
 * ClusterLoadAssignment).
 *
 * Per size (1 stream, then 100 streams): a group of streams on the agent and a group direct on the
 * server, each watching its own target service (so a change reaches only its group's path), changed
 * alternately (agent, direct, direct, agent, ...), each change posted once both processes' event
 * loops are idle again. Both processes' CPU (process.cpuUsage) is read around each change. The
 * agent's RSS is sampled after a full GC (memory-probe.mjs) idle, and with 100 local streams.
 * `npx tsx test/bench/agent-latency.ts [changes per path, default 20]` prints the report as JSON;
 * AGENT_CPU_PROFILE=<file.cpuprofile> writes the agent's CPU profile of the changes at 100 streams
 * (at 1 with AGENT_CPU_PROFILE_STREAMS=1).
 */
import { type ChildProcess, fork, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { FromAgentClients, ToAgentClients } from "./agent-latency-clients.ts";
import { postEvents } from "./fanout.ts";
import { serviceEvents, sliceEvent } from "./mesh.ts";
import { ask, type StartedServer, startServer } from "./npm-start.ts";

const root = new URL("../../", import.meta.url);
const services = 100;

/** One path at one size: when the last stream had the change (ms), and what each change cost (µs CPU). */
export interface AgentLatencyRow {
  streams: number;
  path: "agent" | "direct";
  p50Ms: number;
  p99Ms: number;
  /** Median ingest POST latency (ms). */
  postMs: number;
  /** The agent's CPU per change (µs); 0 on the direct path (the agent holds no stream of it). */
  agentCpuUs: number;
  /** The server's CPU per change (µs). */
  serverCpuUs: number;
}

/** The agent's process memory after a full GC (MB). */
export interface AgentMemory {
  rssMb: number;
  heapUsedMb: number;
}

export interface AgentLatencyReport {
  changes: number;
  rows: AgentLatencyRow[];
  /** Idle (started, no local stream), then with the 100 local streams open after their changes. */
  memory: { idle: AgentMemory; streams100: AgentMemory };
}

/** A started agent process: its local ADS port, its log, and a way to stop it. */
interface StartedAgent {
  child: ChildProcess;
  port: number;
  log(): string;
  stop(): Promise<void>;
}

/** Starts `edgepilot agent` as `npm run agent` does (tsx), with the benches' probes, upstream `xdsPort`. */
async function startAgentProcess(xdsPort: number): Promise<StartedAgent> {
  const probe = (f: string) => new URL(`test/bench/${f}`, root).href;
  const child = spawn(
    process.execPath,
    [
      "--expose-gc",
      "--import",
      "tsx",
      "--import",
      probe("fanout-probe.mjs"),
      "--import",
      probe("memory-probe.mjs"),
      fileURLToPath(new URL("functions/node/agent.ts", root)),
    ],
    {
      cwd: root,
      env: {
        ...process.env,
        EDGEPILOT_AGENT_UPSTREAM: `http://127.0.0.1:${xdsPort}`,
        POD_NAMESPACE: "bench",
        EDGEPILOT_AGENT_PORT: "0",
        EDGEPILOT_AGENT_READY_PORT: "0",
      },
      stdio: ["ignore", "pipe", "inherit", "ipc"],
    },
  );
  let out = "";
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /agent: ADS on 127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once("exit", (code) => reject(new Error(`the agent exited (${code}) before serving: ${out}`)));
  });
  const exited = new Promise<void>((r) => {
    if (child.exitCode !== null) r();
    else child.once("exit", () => r());
  });
  return {
    child,
    port,
    log: () => out,
    async stop() {
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(killer);
    },
  };
}

/** The clients' process: send a message, wait for the next answer of a kind (a failure rejects). */
function forkAgentClients() {
  const child = fork(fileURLToPath(new URL("./agent-latency-clients.ts", import.meta.url)), [], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  let failure: Error | undefined;
  const waiting = new Set<(m: FromAgentClients) => void>();
  child.on("message", (m: FromAgentClients) => {
    if (m.kind === "failed") failure = new Error(`the clients failed: ${m.message}`);
    for (const w of [...waiting]) w(m);
  });
  child.once("exit", () => {
    failure ??= new Error("the clients' process exited");
    for (const w of [...waiting]) w({ kind: "failed", message: failure.message });
  });
  return {
    request<K extends FromAgentClients["kind"]>(
      m: ToAgentClients,
      kind: K,
    ): Promise<Extract<FromAgentClients, { kind: K }>> {
      if (failure) return Promise.reject(failure);
      return new Promise((resolve, reject) => {
        const on = (got: FromAgentClients) => {
          if (got.kind === "failed") {
            waiting.delete(on);
            reject(failure ?? new Error(got.message));
          } else if (got.kind === kind && "group" in m && "group" in got && got.group === m.group) {
            waiting.delete(on);
            resolve(got as Extract<FromAgentClients, { kind: K }>);
          }
        };
        waiting.add(on);
        child.send(m);
      });
    },
    async stop() {
      if (child.connected) child.send({ kind: "stop" } satisfies ToAgentClients);
      const killer = setTimeout(() => child.kill(), 3000);
      if (child.exitCode === null) await new Promise((r) => child.once("exit", r));
      clearTimeout(killer);
    },
  };
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))] as number;
}

async function memoryOf(agent: StartedAgent): Promise<AgentMemory> {
  const m = await ask<{ usage: NodeJS.MemoryUsage }>(agent.child, { kind: "sample" });
  return { rssMb: m.usage.rss / 2 ** 20, heapUsedMb: m.usage.heapUsed / 2 ** 20 };
}

/** Runs the measurement: `changes` changes per path and size. */
export async function measureAgentLatency(changes = 20): Promise<AgentLatencyReport> {
  const server: StartedServer = await startServer("fanout-probe.mjs");
  let agent: StartedAgent | undefined;
  let clients: ReturnType<typeof forkAgentClients> | undefined;
  try {
    const batch: unknown[] = [];
    for (let n = 0; n < services; n++) batch.push(...serviceEvents(n));
    await postEvents(server.port, batch);
    agent = await startAgentProcess(server.xdsPort);
    const a = agent;
    clients = forkAgentClients();
    const c = clients;
    const cpu = async (child: ChildProcess) => (await ask<{ cpu: number }>(child, { kind: "settled" })).cpu;
    const settled = async () => Promise.all([cpu(server.child), cpu(a.child)]);
    const idle = await memoryOf(a);
    const rows: AgentLatencyRow[] = [];
    let streams100: AgentMemory | undefined;
    // Targets: 0 and 1 at one stream, 2 and 3 at 100 (the clients' others come from 8 up).
    for (const [streams, targets] of [
      [1, { agent: 1, direct: 0 }],
      [100, { agent: 3, direct: 2 }],
    ] as const) {
      const ports = { agent: a.port, direct: server.xdsPort };
      const paths: readonly ("agent" | "direct")[] = ["agent", "direct"];
      for (const path of paths) {
        const open: ToAgentClients = {
          kind: "open",
          group: path,
          port: ports[path],
          streams,
          target: targets[path],
          services,
        };
        await c.request(open, "ready");
      }
      const samples = {
        agent: { ms: [] as number[], post: [] as number[], agentCpu: 0, serverCpu: 0 },
        direct: { ms: [] as number[], post: [] as number[], agentCpu: 0, serverCpu: 0 },
      };
      const profiled = Number(process.env.AGENT_CPU_PROFILE_STREAMS ?? 100);
      const profile = streams === profiled ? process.env.AGENT_CPU_PROFILE : undefined;
      if (profile) await ask(a.child, { kind: "profile-start" });
      for (let i = 0; i < changes; i++) {
        // Alternating, and each path first in every other pair: agent, direct, direct, agent, ...
        const order = i % 2 === 0 ? paths : [...paths].reverse();
        for (const path of order) {
          const target = targets[path];
          const ips = [`10.250.${i % 250}.1`, `10.250.${i % 250}.2`];
          const before = await settled();
          const seen = await c.request(
            {
              kind: "post",
              group: path,
              change: i,
              ingestPort: server.port,
              events: [sliceEvent(target, ips, "MODIFIED")],
            },
            "seen",
          );
          const after = await settled();
          const s = samples[path];
          s.ms.push(seen.latencyMs);
          s.post.push(seen.postMs);
          s.serverCpu += after[0] - before[0];
          s.agentCpu += after[1] - before[1];
        }
      }
      if (profile) await ask(a.child, { kind: "profile-stop", file: profile });
      if (streams === 100) streams100 = await memoryOf(a);
      for (const path of paths) {
        const s = samples[path];
        rows.push({
          streams,
          path,
          p50Ms: percentile(s.ms, 50),
          p99Ms: percentile(s.ms, 99),
          postMs: percentile(s.post, 50),
          agentCpuUs: path === "agent" ? s.agentCpu / changes : 0,
          serverCpuUs: s.serverCpu / changes,
        });
        await c.request({ kind: "close", group: path }, "closed");
      }
    }
    return { changes, rows, memory: { idle, streams100: streams100 as AgentMemory } };
  } finally {
    await clients?.stop();
    await agent?.stop();
    await server.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await measureAgentLatency(Number(process.argv[2] ?? 20)), null, 1));
}
