/** Starts the Node runtime as `npm start` does (a child process running functions/node/main.ts). */
import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../../", import.meta.url));

export interface RunningControlPlane {
  port: number;
  xdsPort: number;
  token: string;
  /** Everything the process printed so far. */
  output(): string;
  /** Posts events to /v1/events; the token is added unless `token` is given. */
  post(
    body: unknown,
    init?: { token?: string | null; contentType?: string; raw?: string },
  ): Promise<Response>;
  /** Signals the process and resolves with its exit code; kills it and throws with its output if it hangs. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  process: ChildProcess;
}

/** A free TCP port on loopback. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Spawns the control plane and waits until GET /ready answers 200; `ports` to restart on the same ones. */
export async function startControlPlane(
  env: Record<string, string> = {},
  ports?: { port: number; xdsPort: number },
): Promise<RunningControlPlane> {
  const { port, xdsPort } = ports ?? { port: await freePort(), xdsPort: await freePort() };
  const token = "e2e-token";
  const child = spawn(process.execPath, ["--import", "tsx", "functions/node/main.ts"], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      XDS_PORT: String(xdsPort),
      HOST: "127.0.0.1",
      EDGEPILOT_TOKEN: token,
      // Suites that predate start-up sync post events without resyncs and test removals at once;
      // the restart suite sets its own timeout.
      PILOT_SYNC_TIMEOUT: "0s",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const record = (d: Buffer) => {
    out += d;
    if (process.env.E2E_CHILD_LOG) appendFileSync(`${process.env.E2E_CHILD_LOG}.${child.pid}`, d);
  };
  child.stdout?.on("data", record);
  child.stderr?.on("data", record);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`control plane exited ${child.exitCode}:\n${out}`);
    const ok = await fetch(`${base}/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (i > 300) throw new Error(`control plane not ready after 30s:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    port,
    xdsPort,
    token,
    process: child,
    output: () => out,
    post(body, init = {}) {
      const headers: Record<string, string> = { "content-type": init.contentType ?? "application/json" };
      const t = init.token === undefined ? token : init.token;
      if (t !== null) headers.authorization = `Bearer ${t}`;
      return fetch(`${base}/v1/events`, { method: "POST", headers, body: init.raw ?? JSON.stringify(body) });
    },
    async stop(signal = "SIGTERM") {
      if (child.exitCode === null) child.kill(signal);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const hung = new Promise<"hung">((resolve) => {
        timer = setTimeout(() => resolve("hung"), 15_000);
      });
      const code = await Promise.race([exited, hung]);
      clearTimeout(timer);
      if (code !== "hung") return code;
      child.kill("SIGKILL");
      throw new Error(`control plane did not exit 15s after ${signal}; its output:\n${out}`);
    },
  };
}
