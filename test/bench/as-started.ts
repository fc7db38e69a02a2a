/**
 * Runs a bench file as `npm start` runs the server: compiled by tsc (tsconfig.bench.json, the build's
 * settings, into dist-bench/), no TypeScript loader, under package.json's start environment and node
 * flags (MALLOC_ARENA_MAX, --max-semi-space-size). In-process benches otherwise measure tsx's
 * transform (esbuild keeps every function's name with a call per closure made) and V8's default
 * young generation, not the product. The child is told by AS_STARTED=1 that it runs as started.
 */
import { execFileSync } from "node:child_process";
import { startCommand } from "./npm-start.ts";

const root = new URL("../../", import.meta.url);

/** Whether this process is a bench child started by `runAsStarted` (or the caller asked for in-process). */
export const asStarted = process.env.AS_STARTED === "1";

/**
 * Builds the benches and runs `bench` (a file under test/bench, without extension) with `args` as
 * npm start runs the server; returns what it printed on stdout.
 */
export function runAsStarted(bench: string, args: readonly string[]): string {
  execFileSync("npx", ["tsc", "-p", "tsconfig.bench.json"], {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"],
  });
  const { env, nodeArgs } = startCommand();
  // npm start's flags, its entry swapped for the compiled bench.
  const flags = nodeArgs.filter((a) => a.startsWith("-"));
  return execFileSync(process.execPath, [...flags, `dist-bench/test/bench/${bench}.js`, ...args], {
    cwd: root,
    env: { ...process.env, ...env, AS_STARTED: "1" },
    stdio: ["ignore", "pipe", "inherit"],
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
}
