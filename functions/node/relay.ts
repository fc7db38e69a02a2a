/**
 * `edgepilot relay`: lists and watches Kubernetes and posts the events to edgepilot's ingest.
 * Configuration from flags and environment (see --help); Kubernetes access from KUBECONFIG,
 * ~/.kube/config or the pod's service account. SIGTERM stops the watches, flushes the queue
 * (RELAY_SHUTDOWN_TIMEOUT at most) and exits 0.
 */
import { logError } from "../../lib/log/line-log.ts";
import { parseRelayConfig, relayUsage } from "../../lib/relay/config.ts";
import { bootLogger, createNodeLogger } from "./log.ts";
import { loadKubeConfig } from "./relay/kubeconfig.ts";
import { createRelay } from "./relay/relay.ts";
import { startRelayHealth } from "./relay-health.ts";

const parsed = parseRelayConfig(process.env, process.argv.slice(2));
if (parsed.ok === "help") {
  console.log(relayUsage());
  process.exit(0);
}
if (!parsed.ok) {
  const boot = bootLogger(process.env).line;
  for (const e of parsed.errors) logError(boot, `relay: config: ${e}`);
  process.exit(2);
}
const { config } = parsed;
// LOG_FORMAT / LOG_LEVEL: every line goes through the structured logger.
const log = createNodeLogger(config.log).line;

const loaded = loadKubeConfig(process.env);
if (!loaded.ok) {
  logError(log, `relay: config: ${loaded.error}`);
  process.exit(2);
}
const { kc } = loaded;
const cluster = kc.getCurrentCluster();
log(`relay: Kubernetes API at ${cluster?.server} (context ${kc.getCurrentContext()})`);

const relay = createRelay({ kc, config, log });
let stopping = false;
if (config.healthPort !== undefined) {
  const health = await startRelayHealth(
    {
      health: () => relay.health(),
      stats: () => relay.stats(),
      statusStats: () => relay.statusStats(),
      stopping: () => stopping,
    },
    config.healthPort,
    config.healthHost,
  ).catch((err: unknown) => {
    // One line an operator can act on (the port in use, named with its variable), not a stack.
    logError(log, `relay: cannot start: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(2);
  });
  const at = config.healthHost.includes(":") ? `[${config.healthHost}]` : config.healthHost;
  log(`relay: health on http://${at}:${health.port}/healthz and /ready`);
}
relay.start();

for (const sig of ["SIGTERM", "SIGINT"] as const) {
  process.on(sig, () => {
    if (stopping) return;
    stopping = true;
    log(`relay: ${sig}: stopping watches and flushing the queue (at most ${config.shutdownTimeoutMs}ms)`);
    relay.stop(config.shutdownTimeoutMs).then(
      ({ flushed, stats }) => {
        if (flushed) log(`relay: queue flushed (${stats.deliveredEvents} events delivered in all); bye`);
        else
          log(
            `relay: ${stats.queuedEvents} events and ${stats.queuedEntries - stats.queuedEvents} resyncs not ` +
              "delivered in time; the next relay's initial lists cover them",
          );
        process.exit(0);
      },
      (err) => {
        logError(log, `relay: unclean stop: ${err}`);
        process.exit(1);
      },
    );
  });
}
