/**
 * The connect and disconnect lines of ADS streams (istiod's "ADS: new connection for node" and
 * "terminated"): one line each per stream, at info in scope `ads`, naming the node and how many
 * streams the instance serves. A stream refused before its first valid request logs neither.
 */
import { logAt } from "../log/line-log.ts";
import { logSafe } from "../log-safe.ts";

export interface ConnectionLogOptions {
  log: (line: string) => void;
  now: () => number;
  /** The streams the instance serves now (the per-instance count EDGEPILOT_MAX_STREAMS bounds). */
  streams: () => number;
}

/** One stream's lines: `connected` on its first accepted request, `closed` once at its end. */
export interface StreamConnectionLog {
  /** Notes the node of an accepted request; the first one logs the connection. */
  connected(nodeId: string | undefined): void;
  /** Logs the disconnection (only when a connection was logged); call after the count went down. */
  closed(): void;
}

/** The factory of per-stream loggers; `kind` says which ADS flavour (sotw or delta). */
export function createConnectionLog(options: ConnectionLogOptions) {
  return (kind: "sotw" | "delta"): StreamConnectionLog => {
    let node: string | undefined;
    let since = 0;
    return {
      connected(nodeId) {
        if (node !== undefined) return;
        node = nodeId ?? "";
        since = options.now();
        const streams = options.streams();
        logAt(
          options.log,
          "info",
          `xds: proxy ${logSafe(node)} connected (${kind} ADS), ${streams} stream(s) open`,
          { node, type: kind, streams },
        );
      },
      closed() {
        if (node === undefined) return;
        const streams = options.streams();
        const ms = options.now() - since;
        logAt(
          options.log,
          "info",
          `xds: proxy ${logSafe(node)} disconnected after ${ms}ms (${kind} ADS), ${streams} stream(s) open`,
          { node, type: kind, streams, connected_ms: ms },
        );
        node = undefined;
      },
    };
  };
}
