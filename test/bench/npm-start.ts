/**
 * The server of the process benches (memory.ts, fanout.ts), started exactly as `npm start` starts
 * it: package.json's `start` script (its environment, node flags and compiled entry, built fresh by
 * `npm run build`), plus a plain-JavaScript probe loaded with --import that answers the bench over
 * IPC. No TypeScript loader runs in the server, so what is measured is the product.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";

const root = new URL("../../", import.meta.url);

/** package.json's `start` script split into its environment, node's flags and the entry (MEMORY_START overrides it). */
export function startCommand(): { line: string; env: Record<string, string>; nodeArgs: string[] } {
  const pkg = JSON.parse(readFileSync(new URL("package.json", root), "utf8")) as {
    scripts: { start: string };
  };
  const line = process.env.MEMORY_START ?? pkg.scripts.start;
  const words = line.trim().split(/\s+/);
  const env: Record<string, string> = {};
  while (words[0] !== undefined && /^[A-Z_][A-Z0-9_]*=/.test(words[0])) {
    const [k, ...v] = (words.shift() as string).split("=");
    env[k as string] = v.join("=");
  }
  if (words.shift() !== "node") throw new Error(`npm start is not a node command: ${line}`);
  return { line, env, nodeArgs: words };
}

/** A started server: its process (IPC to the probe), the command line and its ports. */
export interface StartedServer {
  child: ChildProcess;
  line: string;
  port: number;
  xdsPort: number;
  /** SIGTERM, then resolves once it exited. */
  stop(): Promise<void>;
}

/**
 * Builds and starts the server with the benches' configuration (EDS debounce off, limits raised
 * for 1,000 streams on one connection); `probe` (a file under test/bench) and `nodeFlags` come
 * before npm start's own flags. Resolves once it serves.
 */
export async function startServer(probe: string, nodeFlags: string[] = []): Promise<StartedServer> {
  execFileSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" });
  const { line, env, nodeArgs } = startCommand();
  const probeUrl = new URL(`test/bench/${probe}`, root).href;
  const child = spawn(process.execPath, [...nodeFlags, "--import", probeUrl, ...nodeArgs], {
    cwd: root,
    env: {
      ...process.env,
      ...env,
      PORT: "0",
      XDS_PORT: "0",
      HOST: "127.0.0.1",
      PILOT_ENABLE_EDS_DEBOUNCE: "false",
      EDGEPILOT_MAX_STREAMS_PER_CONNECTION: "2000",
      PILOT_MAX_REQUESTS_PER_SECOND: "100000",
      EDGEPILOT_MAX_REQUEST_BYTES: String(64 * 1024 * 1024),
    },
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
  const { ports, exited } = await serving(child, "the server");
  return {
    child,
    line,
    ...ports,
    async stop() {
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(killer);
    },
  };
}

/**
 * Resolves once `child` says it serves (its start-up line names both ports), with those ports and a
 * promise of its exit; rejects with its output if it exits first. `what` names it in that error.
 */
export async function serving(
  child: ChildProcess,
  what: string,
): Promise<{ ports: { port: number; xdsPort: number }; exited: Promise<void> }> {
  const ports = await new Promise<{ port: number; xdsPort: number }>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /on http:\/\/[^:]+:(\d+), xDS .* on h2c [^:]+:(\d+)/.exec(out);
      if (m) resolve({ port: Number(m[1]), xdsPort: Number(m[2]) });
    });
    child.once("exit", (code) => reject(new Error(`${what} exited (${code}) before serving: ${out}`)));
  });
  const exited = new Promise<void>((r) => {
    if (child.exitCode !== null) r();
    else child.once("exit", () => r());
  });
  return { ports, exited };
}

/** Sends `message` to the server's probe and resolves with its next answer of kind `kind`. */
export function ask<T>(
  server: ChildProcess,
  message: { kind: string } & Record<string, unknown>,
): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: { kind?: string }) => {
      if (m?.kind !== message.kind) return;
      server.off("message", on);
      resolve(m as T);
    };
    server.on("message", on);
    server.send(message);
  });
}
