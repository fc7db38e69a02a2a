/**
 * bin/edgepilot.mjs as an operator runs it: every command the usage lists answers --help with its
 * own usage and exit 0 without starting anything (nothing binds: the test holds the default ports'
 * stand-ins and checks they stay free of edgepilot); `version` prints the package version, commit
 * and Node; a port in use is one line naming the port and its variable, exit 2, no stack.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { type AddressInfo, createServer, type Server } from "node:net";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../../", import.meta.url));

function run(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ["bin/edgepilot.mjs", ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

const held: Server[] = [];
async function holdPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  held.push(s);
  return (s.address() as AddressInfo).port;
}
afterAll(async () => {
  for (const s of held) await new Promise((r) => s.close(r));
});

const usage = await run(["--help"]);
const commands = [...usage.stdout.matchAll(/^ {2}([a-z-]+) {2,}/gm)].map((m) => m[1] as string);

describe("edgepilot (bin/edgepilot.mjs)", () => {
  it("lists its commands; no command is exit 2 with the usage", async () => {
    expect(usage.code).toBe(0);
    expect(commands).toEqual(expect.arrayContaining(["serve", "relay", "agent", "version"]));
    const none = await run([]);
    expect(none.code).toBe(2);
    expect(none.stdout).toBe(usage.stdout);
    const unknown = await run(["sevre"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^edgepilot: unknown command "sevre"/);
  });

  // Each listed command (and `agent bootstrap`): its own usage, exit 0, fast, nothing started. The
  // environment would make serve/relay/agent start and bind PORT (etc.) if --help were ignored.
  const helpCases = () => [...commands.map((c) => [c]), ["agent", "bootstrap"]];
  it("every command answers --help and -h without starting anything", async () => {
    const port = await holdPort();
    const env = {
      PORT: String(port),
      XDS_PORT: "0",
      EDGEPILOT_URL: "http://127.0.0.1:1",
      POD_NAMESPACE: "default",
      EDGEPILOT_AGENT_UPSTREAM: "http://127.0.0.1:1",
      EDGEPILOT_AGENT_PORT: String(port),
    };
    // -h on one command, --help on the others; in parallel (each is a Node start).
    const cases = helpCases().map((words, i) => [...words, i === 0 ? "-h" : "--help"]);
    const results = await Promise.all(cases.map((args) => run(args, env)));
    results.forEach((r, i) => {
      const words = (cases[i] as string[]).slice(0, -1).join(" ");
      expect(r.code, `${words}: ${r.stderr}`).toBe(0);
      expect(r.stdout, words).toMatch(new RegExp(`^usage: edgepilot ${words}`));
      expect(r.stderr, words).toBe("");
      expect(r.stdout).not.toMatch(/cannot start|ready on http|health on http|relay: Kubernetes API|sync: /);
    });
  }, 60_000);

  it("version: the package version, a commit and Node's version", async () => {
    const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8")) as { version: string };
    for (const args of [["version"], ["--version"]]) {
      const r = await run(args);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(
        new RegExp(
          `^edgepilot ${pkg.version.replaceAll(".", "\\.")}\\ncommit ([0-9a-f]{40}(-dirty)?|unknown)\\nnode ${process.version}\\n$`,
        ),
      );
    }
    expect((await run(["version", "extra"])).code).toBe(2);
  });

  it("serve: a wrong flag is refused (exit 2), not ignored", async () => {
    const r = await run(["serve", "--prot", "8080"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('edgepilot: "--prot": unknown argument (see --help)');
  });

  const inUse: {
    name: string;
    args: (p: number) => string[];
    env: (p: number) => Record<string, string>;
    line: (p: number) => string;
  }[] = [
    {
      name: "serve, PORT",
      args: () => ["serve"],
      env: (p) => ({ PORT: String(p), XDS_PORT: "0", HOST: "127.0.0.1", EDGEPILOT_TOKEN: "" }),
      line: (p) =>
        `edgepilot: cannot start: PORT=${p}: port ${p} on 127.0.0.1 is already in use by another process`,
    },
    {
      name: "serve --xds-port, XDS_PORT",
      args: (p) => ["serve", "--xds-port", String(p)],
      env: () => ({ PORT: "0", HOST: "127.0.0.1", EDGEPILOT_TOKEN: "" }),
      line: (p) =>
        `edgepilot: cannot start: XDS_PORT=${p}: port ${p} on 127.0.0.1 is already in use by another process`,
    },
    {
      name: "agent, EDGEPILOT_AGENT_PORT",
      args: () => ["agent", "--ready-port", "0"],
      env: (p) => ({
        POD_NAMESPACE: "default",
        EDGEPILOT_AGENT_UPSTREAM: "http://127.0.0.1:1",
        EDGEPILOT_AGENT_PORT: String(p),
      }),
      line: (p) =>
        `agent: cannot start: EDGEPILOT_AGENT_PORT=${p}: port ${p} on 127.0.0.1 is already in use by another process`,
    },
    {
      name: "agent, EDGEPILOT_AGENT_READY_PORT",
      args: (p) => ["agent", "--port", "0", "--ready-port", String(p)],
      env: () => ({ POD_NAMESPACE: "default", EDGEPILOT_AGENT_UPSTREAM: "http://127.0.0.1:1" }),
      line: (p) =>
        `agent: cannot start: EDGEPILOT_AGENT_READY_PORT=${p}: port ${p} on 127.0.0.1 is already in use by another process`,
    },
  ];
  // Concurrent: each is a Node start of a few seconds on this machine.
  for (const c of inUse) {
    it.concurrent(`a port in use (${c.name}): one line naming it, exit 2, no stack`, async ({ expect }) => {
      const port = await holdPort();
      const r = await run(c.args(port), c.env(port));
      expect(r.code, r.stdout + r.stderr).toBe(2);
      const errors = r.stderr.trim().split("\n");
      expect(errors).toHaveLength(1);
      expect(errors[0]).toContain(c.line(port));
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }, 20_000);
  }
});
