/**
 * The relay's health endpoint (RELAY_HEALTH_PORT): GET /healthz answers 200 while the process
 * serves (liveness), GET /ready 200 or 503 with lib/relay/health.ts's JSON (readiness). Plain
 * node:http; it says only whether the relay is live and ready, how much it delivered and how many
 * statuses it wrote back.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { listenError } from "../../lib/listen-error.ts";
import type { DeliveryStats } from "../../lib/relay/delivery.ts";
import { type KindHealth, relayReadiness } from "../../lib/relay/health.ts";
import type { StatusStats } from "./relay/status-writer.ts";

/** A listening health endpoint: its port (the one asked for, or the free one 0 found) and close. */
export interface RelayHealthServer {
  port: number;
  close(): Promise<void>;
}

/** What the endpoint reads on each probe. */
export interface RelayHealthSource {
  health(): KindHealth[];
  stats(): DeliveryStats;
  stopping(): boolean;
  /** The status writer's outcomes by kind, shown as `statusWrites` in /ready's body. */
  statusStats?(): StatusStats;
}

/**
 * Listens on `host:port`; rejects with one line naming RELAY_HEALTH_PORT when it cannot (a port in
 * use), so the relay exits before it watches anything.
 */
export async function startRelayHealth(
  source: RelayHealthSource,
  port: number,
  host: string,
): Promise<RelayHealthServer> {
  const server: Server = createServer((req, res) => {
    const path = req.url?.split("?")[0];
    if (req.method !== "GET" && req.method !== "HEAD") return void res.writeHead(405).end();
    if (path === "/healthz") return void res.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
    if (path !== "/ready") return void res.writeHead(404).end();
    const r = relayReadiness(source.health(), source.stats(), source.stopping());
    const body = source.statusStats ? { ...r.body, statusWrites: source.statusStats() } : r.body;
    res.writeHead(r.status, { "content-type": "application/json" }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (e) => reject(listenError(e, { variable: "RELAY_HEALTH_PORT", port, host })));
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
