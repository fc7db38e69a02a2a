/**
 * `edgepilot agent`: serves ADS to the proxies of its pod from one upstream Delta ADS stream (see
 * lib/agent/index.ts). Configuration from flags and environment (see --help). SIGTERM closes the
 * local streams and the upstream (saving the disk cache, if any) and exits 0. `edgepilot agent
 * bootstrap --generator grpc|envoy` prints the bootstrap of a proxyless gRPC client or an Envoy of
 * this pod (lib/agent/bootstrap.ts, envoy-bootstrap.ts).
 */
import { bootstrapUsage, grpcBootstrap, parseBootstrapArgs } from "../../lib/agent/bootstrap.ts";
import { agentUsage, parseAgentConfig } from "../../lib/agent/config.ts";
import { envoyBootstrap } from "../../lib/agent/envoy-bootstrap.ts";
import { logError } from "../../lib/log/line-log.ts";
import { startAgent } from "./agent-runtime.ts";
import { bootLogger, createNodeLogger } from "./log.ts";

if (process.argv[2] === "bootstrap") {
  if (process.argv.slice(3).some((a) => a === "--help" || a === "-h")) {
    console.log(bootstrapUsage());
    process.exit(0);
  }
  const args = parseBootstrapArgs(process.env, process.argv.slice(3));
  if (!args.ok) {
    for (const e of args.errors) console.error(`agent bootstrap: ${e}`);
    process.exit(2);
  }
  const { input } = args;
  const bootstrap = input.envoy ? envoyBootstrap({ ...input, envoy: input.envoy }) : grpcBootstrap(input);
  console.log(JSON.stringify(bootstrap, null, 2));
  process.exit(0);
}

const parsed = parseAgentConfig(process.env, process.argv.slice(2));
if (parsed.ok === "help") {
  console.log(agentUsage());
  process.exit(0);
}
if (!parsed.ok) {
  const boot = bootLogger(process.env).line;
  for (const e of parsed.errors) logError(boot, `agent: config: ${e}`);
  process.exit(2);
}
// LOG_FORMAT / LOG_LEVEL: every line goes through the structured logger.
const log = createNodeLogger(parsed.config.log).line;
const agent = await startAgent(parsed.config, { log }).catch((e: unknown) => {
  // One line an operator can act on (a port in use names its variable), not a stack; 2 as for config.
  logError(log, `agent: cannot start: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(2);
});
let stopping = false;
for (const sig of ["SIGTERM", "SIGINT"] as const) {
  process.on(sig, () => {
    if (stopping) return;
    stopping = true;
    log(`agent: ${sig}: closing local streams and the upstream`);
    agent.stop().then(
      () => process.exit(0),
      (e: unknown) => {
        logError(log, `agent: unclean stop: ${String(e)}`);
        process.exit(1);
      },
    );
  });
}
