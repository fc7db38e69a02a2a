/**
 * `edgepilot relay`: lists and watches Kubernetes and posts the events to edgepilot's ingest.
 * Configuration from flags and environment (see --help); Kubernetes access from KUBECONFIG,
 * ~/.kube/config or the pod's service account. SIGTERM stops the watches, flushes the queue
 * (RELAY_SHUTDOWN_TIMEOUT at most) and exits 0.
 */
import { parseRelayConfig, relayUsage } from "../../lib/relay/config.ts";
import { loadKubeConfig } from "./relay/kubeconfig.ts";
import { createRelay } from "./relay/relay.ts";
import { startRelayHealth } from "./relay-health.ts";

const parsed = parseRelayConfig(process.env, process.argv.slice(2));
if (parsed.ok === "help") {
  console.log(relayUsage());
  process.exit(0);
}
if (!parsed.ok) {
  for (const e of parsed.errors) console.error(`relay: config: ${e}`);
  process.exit(2);
}
const { config } = parsed;

const loaded = loadKubeConfig(process.env);
if (!loaded.ok) {
  console.error(`relay: config: ${loaded.error}`);
  process.exit(2);
}
const { kc } = loaded;
const cluster = kc.getCurrentCluster();
console.log(`relay: Kubernetes API at ${cluster?.server} (context ${kc.getCurrentContext()})`);

const relay = createRelay({ kc, config, log: (line) => console.log(line) });
let stopping = false;
if (config.healthPort !== undefined) {
  const health = await startRelayHealth(
    { health: () => relay.health(), stats: () => relay.stats(), stopping: () => stopping },
    config.healthPort,
    config.healthHost,
  ).catch((err: unknown) => {
    // One line an operator can act on (the port in use, named with its variable), not a stack.
    console.error(`relay: cannot start: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(2);
  });
  const at = config.healthHost.includes(":") ? `[${config.healthHost}]` : config.healthHost;
  console.log(`relay: health on http://${at}:${health.port}/healthz and /ready`);
}
relay.start();

for (const sig of ["SIGTERM", "SIGINT"] as const) {
  process.on(sig, () => {
    if (stopping) return;
    stopping = true;
    console.log(
      `relay: ${sig}: stopping watches and flushing the queue (at most ${config.shutdownTimeoutMs}ms)`,
    );
    relay.stop(config.shutdownTimeoutMs).then(
      ({ flushed, stats }) => {
        if (flushed)
          console.log(`relay: queue flushed (${stats.deliveredEvents} events delivered in all); bye`);
        else
          console.log(
            `relay: ${stats.queuedEvents} events and ${stats.queuedEntries - stats.queuedEvents} resyncs not ` +
              "delivered in time; the next relay's initial lists cover them",
          );
        process.exit(0);
      },
      (err) => {
        console.error(`relay: unclean stop: ${err}`);
        process.exit(1);
      },
    );
  });
}
