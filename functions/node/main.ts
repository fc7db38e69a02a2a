/**
 * The embedded control plane on Node: ingest and REST on PORT (HTTP/1.1), gRPC ADS, Connect
 * and gRPC-Web on XDS_PORT (cleartext HTTP/2), the store EDGEPILOT_STORE names, a timer-driven debounce.
 */
import { parseConfig } from "../../lib/config.ts";
import { logError } from "../../lib/log/line-log.ts";
import { parseServeArgs, serveUsage } from "../../lib/serve-flags.ts";
import { bootLogger, createNodeLogger } from "./log.ts";

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
  const boot = bootLogger(process.env).line;
  for (const e of parsed.errors) logError(boot, `edgepilot: config: ${e}`);
  process.exit(2);
}
// LOG_FORMAT / LOG_LEVEL: every component's `(line) => void` goes through the structured logger.
const log = createNodeLogger(parsed.config.log).line;

const { startNodeRuntime } = await import("./runtime.ts");
const runtime = await startNodeRuntime(parsed.config, { log }).catch((err) => {
  // One line an operator can act on (a data directory in use, a port taken), not a stack trace.
  logError(log, `edgepilot: cannot start: ${err instanceof Error ? err.message : err}`);
  process.exit(2);
});

let stopping = false;
for (const sig of ["SIGTERM", "SIGINT"] as const) {
  process.on(sig, () => {
    if (stopping) return;
    stopping = true;
    log(`edgepilot: ${sig}: draining streams and stopping`);
    const started = Date.now();
    runtime.stop().then(
      () => {
        log(`edgepilot: stopped in ${Date.now() - started}ms`);
        process.exit(0);
      },
      (err) => {
        logError(log, `edgepilot: unclean stop: ${err}`);
        process.exit(1);
      },
    );
  });
}
