/**
 * The embedded control plane on Node: ingest and REST on PORT (HTTP/1.1), gRPC ADS, Connect
 * and gRPC-Web on XDS_PORT (cleartext HTTP/2), an in-memory store, a timer-driven debounce.
 */
import { parseConfig } from "../../lib/config.ts";
import { startNodeRuntime } from "./runtime.ts";

const parsed = parseConfig(process.env);
if (!parsed.ok) {
  for (const e of parsed.errors) console.error(`edgepilot: config: ${e}`);
  process.exit(2);
}

const runtime = await startNodeRuntime(parsed.config, { log: (line) => console.log(line) }).catch(
  (err: unknown) => {
    console.error(`edgepilot: config: ${err instanceof Error ? err.message : err}`);
    process.exit(2);
  },
);

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
