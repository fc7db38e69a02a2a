#!/usr/bin/env node
// edgepilot's command line: `edgepilot serve` (the control plane on Node), `edgepilot relay`
// (the in-cluster list/watch relay), `edgepilot agent` (the local xDS proxy beside a workload) and
// `edgepilot version`. Runs the compiled JavaScript in dist/ (`npm run build`; the container image
// has nothing else) in this process, so signals (SIGTERM) reach the entry directly. In a source
// checkout whose dist/ is missing or older than the sources, it runs the TypeScript through tsx.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";

const commands = {
  serve: { entry: "../functions/node/main.ts", help: "the control plane: ingest, xDS (npm start)" },
  relay: { entry: "../functions/node/relay.ts", help: "list and watch Kubernetes, post events to ingest" },
  agent: {
    entry: "../functions/node/agent.ts",
    help: "beside a workload: local ADS for its proxies, one upstream",
  },
  "proxy-status": {
    entry: "../functions/node/proxy-status.ts",
    help: "each proxy's xDS sync status (as istioctl proxy-status); with a proxyID, its diff",
  },
  version: { entry: undefined, help: "print edgepilot's version, git commit and Node version" },
};

const usage = [
  "usage: edgepilot <command> [flags]",
  "",
  ...Object.entries(commands).map(([name, c]) => `  ${name.padEnd(14)}${c.help}`),
  "",
  "edgepilot <command> --help lists its flags and environment variables.",
].join("\n");

const here = (path) => fileURLToPath(new URL(path, import.meta.url));

const [name, ...rest] = process.argv.slice(2);
if (name === undefined || name === "--help" || name === "-h" || name === "help") {
  console.log(usage);
  process.exit(name === undefined ? 2 : 0);
}
if (name === "--version") await version([]);
const command = commands[name];
if (command === undefined) {
  console.error(`edgepilot: unknown command ${JSON.stringify(name)}\n\n${usage}`);
  process.exit(2);
}
if (command.entry === undefined) await version(rest);

// dist/functions/node/x.js for ../functions/node/x.ts (tsconfig.build.json: outDir dist, rootDir .).
const compiled = command.entry.replace(/^\.\.\//, "../dist/").replace(/\.ts$/, ".js");
const source = existsSync(here(command.entry));
let entry = compiled;
if (source && !upToDate(here(compiled))) {
  const { register } = await import("tsx/esm/api");
  register({ tsconfig: here("../tsconfig.json") });
  entry = command.entry;
} else if (!existsSync(here(compiled))) {
  console.error(`edgepilot: ${here(compiled)} is missing: run npm run build`);
  process.exit(2);
}
// The entry reads its flags from process.argv.slice(2), as when run directly.
process.argv = [process.argv[0], here(entry), ...rest];
await import(entry);

/**
 * Whether `file` (a compiled entry) exists and is newer than every TypeScript source it may be built
 * from (functions/, lib/), so a checkout never runs a build older than its edits.
 */
function upToDate(file) {
  const built = statSync(file, { throwIfNoEntry: false })?.mtimeMs;
  if (built === undefined) return false;
  const newer = (dir) =>
    readdirSync(dir, { withFileTypes: true }).some((e) => {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory()) return newer(path);
      return e.name.endsWith(".ts") && statSync(path).mtimeMs > built;
    });
  return !newer(here("../functions")) && !newer(here("../lib"));
}

/** `edgepilot version`: the package's version, the git commit when known, the Node version. */
async function version(args) {
  if (args.some((a) => a === "--help" || a === "-h")) {
    console.log(
      "usage: edgepilot version\n\nPrints edgepilot's version, its git commit (when known) and Node's.",
    );
    process.exit(0);
  }
  if (args.length > 0) {
    console.error(`edgepilot: version takes no arguments, got ${JSON.stringify(args[0])}`);
    process.exit(2);
  }
  const pkg = JSON.parse(readFileSync(here("../package.json"), "utf8"));
  console.log(`edgepilot ${pkg.version}\ncommit ${commit()}\nnode ${process.version}`);
  process.exit(0);
}

/** The checkout's git commit (`-dirty` with uncommitted changes), else the one dist/ was built from, else unknown. */
function commit() {
  if (existsSync(here("../.git"))) {
    try {
      const cwd = here("..");
      const git = (...args) => execFileSync("git", args, { cwd, encoding: "utf8", stdio: "pipe" }).trim();
      const head = git("rev-parse", "HEAD");
      return git("status", "--porcelain", "--untracked-files=no") === "" ? head : `${head}-dirty`;
    } catch {}
  }
  // Written by npm run build (scripts/build-info.mjs); the image has no .git.
  try {
    const info = JSON.parse(readFileSync(here("../dist/build-info.json"), "utf8"));
    if (typeof info.commit === "string" && info.commit !== "") return info.commit;
  } catch {}
  return "unknown";
}
