/**
 * The embedded control plane on Node: ingest and REST on PORT (HTTP/1.1), gRPC ADS, Connect
 * and gRPC-Web on XDS_PORT (cleartext HTTP/2), the store EDGEPILOT_STORE names, a timer-driven debounce.
 */
import { parseConfig } from "../../lib/config.ts";
import { parseServeArgs, serveUsage } from "../../lib/serve-flags.ts";

// Flags first: --help (or a wrong flag) answers before anything is loaded or bound.
const args = parseServeArgs(process.env, process.argv.slice(2));
if (args.ok === "help") {
  console.log(serveUsage());
  process.exit(0);
}
if (!args.ok) {
  for (const e of args.errors) console.error(`edgepilot: ${e}`);
  process.exit(2);
}
const parsed = parseConfig(args.env);
if (!parsed.ok) {
  for (const e of parsed.errors) console.error(`edgepilot: config: ${e}`);
  process.exit(2);
}

const { startNodeRuntime } = await import("./runtime.ts");
const runtime = await startNodeRuntime(parsed.config, { log: (line) => console.log(line) }).catch((err) => {
  // One line an operator can act on (a data directory in use, a port taken), not a stack trace.
  console.error(`edgepilot: cannot start: ${err instanceof Error ? err.message : err}`);
  process.exit(2);
});

let stopping = false;
for (const sig of ["SIGTERM", "SIGINT"] as const) {
  process.on(sig, () => {
    if (stopping) return;
    stopping = true;
    console.log(`edgepilot: ${sig}: draining streams and stopping`);
    const started = Date.now();
    runtime.stop().then(
      () => {
        console.log(`edgepilot: stopped in ${Date.now() - started}ms`);
        process.exit(0);
      },
      (err) => {
        console.error(`edgepilot: unclean stop: ${err}`);
        process.exit(1);
      },
    );
  });
}
