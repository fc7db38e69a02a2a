/**
 * The well-behaved proxy of the abuse suite: a Delta ADS client subscribed to one service's
 * endpoints, and the time from an ingest POST to that client receiving the change. Also the
 * control plane's resident memory, read from /proc.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { setPriority } from "node:os";
import { fileURLToPath } from "node:url";
import { type DeltaStream, openDelta } from "../delta/delta-client.ts";
import { EDS, names, node, podEvent, serviceEvents, sliceEvent } from "../delta/mesh.ts";
import type { RunningControlPlane } from "../support/runtime.ts";

const ipsA = ["10.9.0.1", "10.9.0.2"];
const ipsB = ["10.9.0.3"];

export interface Probe {
  /** One push latency sample (ms): POST a change, wait until the proxy has it, ACK it. */
  sample(): Promise<number>;
  /** The median of `n` samples. */
  median(n?: number): Promise<number>;
  close(): void;
}

/** Creates the probe's service and opens its stream; resolves once the proxy holds the first version. */
export async function openProbe(cp: RunningControlPlane, service = "probe"): Promise<Probe> {
  const post = async (events: unknown[]) => {
    // One retry: a keep-alive socket the server closed just then resets (same events, same versions).
    const res = await cp.post(events).catch(() => cp.post(events));
    if (!res.ok) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
  };
  await post([...serviceEvents(service, ipsA), ...ipsB.map((ip) => podEvent(service, ip))]);
  const cluster = names(service).cluster;
  const stream: DeltaStream = openDelta(cp.xdsPort);
  stream.send({ node: node(`${service}-proxy`), typeUrl: EDS, resourceNamesSubscribe: [cluster] });
  const first = await waitFor(stream, cluster, 10_000);
  let flip = false;
  const probe: Probe = {
    async sample() {
      flip = !flip;
      const t0 = performance.now();
      await post([sliceEvent(service, flip ? ipsB : ipsA)]);
      await waitFor(stream, cluster, 10_000);
      return performance.now() - t0;
    },
    async median(n = 5) {
      const xs: number[] = [];
      for (let i = 0; i < n; i++) xs.push(await probe.sample());
      xs.sort((a, b) => a - b);
      return xs[Math.floor(n / 2)] as number;
    },
    close: () => stream.close(),
  };
  if (!first) throw new Error("the probe proxy got no first response");
  return probe;

  async function waitFor(s: DeltaStream, name: string, ms: number) {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      const r = await s.next(until - Date.now());
      if (!r) break;
      s.send({ typeUrl: r.typeUrl, responseNonce: r.nonce });
      if (r.resources.some((x) => x.name === name)) return r;
    }
    throw new Error(`the probe proxy did not receive ${name} within ${ms}ms`);
  }
}

/** Resident memory of process `pid` in MB (Linux /proc), or undefined elsewhere. */
export function rssMb(pid: number | undefined): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** One attack under way in the attacker process: `underWay` once its load is in place, then `result`. */
export interface Attack<T> {
  underWay: Promise<void>;
  result: Promise<T>;
  /** True once the result arrived. */
  done(): boolean;
}

/** The attacker.ts process: runs one attack at a time against `xdsPort`. */
export interface Attacker {
  run<T = Record<string, unknown>>(attack: string, holdMs?: number): Attack<T>;
  close(): void;
}

/** Starts attacker.ts in a child process (once: starting tsx costs seconds on a busy machine). */
export function startAttacker(xdsPort: number): Attacker {
  const root = fileURLToPath(new URL("../../../", import.meta.url));
  const child = spawn(process.execPath, ["--import", "tsx", "test/e2e/abuse/attacker.ts", String(xdsPort)], {
    cwd: root,
    stdio: ["pipe", "pipe", "pipe"],
  });
  // An attacker runs on another machine: here it must not take the CPU the proxy and control plane need.
  if (child.pid !== undefined) setPriority(child.pid, 19);
  let out = "";
  let err = "";
  let waiting: { line: (l: string) => void } | undefined;
  child.stderr.on("data", (d) => {
    err += d;
  });
  child.stdout.on("data", (d) => {
    out += d;
    for (let nl = out.indexOf("\n"); nl >= 0; nl = out.indexOf("\n")) {
      const line = out.slice(0, nl);
      out = out.slice(nl + 1);
      waiting?.line(line);
    }
  });
  return {
    run<T>(attack: string, holdMs = 2000): Attack<T> {
      let started: () => void = () => {};
      const underWay = new Promise<void>((r) => {
        started = r;
      });
      let finished = false;
      const result = new Promise<T>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`attack ${attack} gave no result in 30s:\n${err}`)),
          30_000,
        );
        child.once("exit", (code) => reject(new Error(`attacker exited ${code} during ${attack}:\n${err}`)));
        waiting = {
          line(l) {
            if (l === "under way") return started();
            clearTimeout(timer);
            finished = true;
            started();
            waiting = undefined;
            resolve(JSON.parse(l) as T);
          },
        };
      });
      child.stdin.write(`${attack} ${holdMs}\n`);
      return { underWay, result, done: () => finished };
    },
    close: () => {
      child.stdin.end();
      child.kill();
    },
  };
}
