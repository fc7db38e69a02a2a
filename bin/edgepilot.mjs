#!/usr/bin/env node
// edgepilot's command line: `edgepilot serve` (the control plane on Node), `edgepilot relay`
// (the in-cluster list/watch relay) and `edgepilot agent` (the local xDS proxy beside a workload).
// Runs the TypeScript entries in this process through tsx, so
// signals (SIGTERM) reach them directly.
import { fileURLToPath } from "node:url";
import { register } from "tsx/esm/api";

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
};

const usage = [
  "usage: edgepilot <command> [flags]",
  "",
  ...Object.entries(commands).map(([name, c]) => `  ${name.padEnd(8)}${c.help}`),
  "",
  "edgepilot relay --help and edgepilot agent --help list their flags and environment variables.",
].join("\n");

const [name, ...rest] = process.argv.slice(2);
if (name === undefined || name === "--help" || name === "-h" || name === "help") {
  console.log(usage);
  process.exit(name === undefined ? 2 : 0);
}
const command = commands[name];
if (command === undefined) {
  console.error(`edgepilot: unknown command ${JSON.stringify(name)}\n\n${usage}`);
  process.exit(2);
}

register({ tsconfig: fileURLToPath(new URL("../tsconfig.json", import.meta.url)) });
// The entry reads its flags from process.argv.slice(2), as when run directly with tsx.
process.argv = [process.argv[0], fileURLToPath(new URL(command.entry, import.meta.url)), ...rest];
await import(command.entry);
