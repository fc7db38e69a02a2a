/**
 * Posts deliveries to edgepilot's ingest: NDJSON to /v1/events, a List to
 * /v1/resync?cluster=<id>&kind=<Kind>&watching=<Kind>,<Kind>,... (`watching`: every kind the relay
 * watches in this cluster as the POST leaves, in lib/kinds/descriptors.ts's order).
 */
import { watchingValue } from "../../../lib/relay/kinds.ts";
import type { PostResult } from "../../../lib/relay/outcome.ts";
import type { Delivery } from "../../../lib/relay/queue.ts";

/** Where and as whom to post. */
export interface IngestTarget {
  url: string;
  token: string | undefined;
  clusterId: string;
  /** Longest one POST may take before it counts as a network failure (and is retried). */
  timeoutMs?: number;
}

/** A poster for createDeliverySender: never throws, a network failure comes back as `{ error }`. */
export function createIngestPoster(target: IngestTarget): (d: Delivery) => Promise<PostResult> {
  const cluster = encodeURIComponent(target.clusterId);
  return async (d) => {
    const url =
      d.type === "events"
        ? `${target.url}/v1/events?cluster=${cluster}`
        : `${target.url}/v1/resync?cluster=${cluster}&kind=${encodeURIComponent(d.kind)}` +
          (d.watching ? `&watching=${watchingValue(d.watching)}` : "");
    const headers: Record<string, string> = {
      "content-type": d.type === "events" ? "application/x-ndjson" : "application/json",
    };
    if (target.token !== undefined) headers.authorization = `Bearer ${target.token}`;
    const body = d.type === "events" ? `${d.lines.join("\n")}\n` : d.body;
    try {
      const res = await fetch(url, {
        method: "POST",
        headers,
        body,
        signal: AbortSignal.timeout(target.timeoutMs ?? 60_000),
      });
      const instance = res.headers.get("x-edgepilot-instance") ?? undefined;
      return { status: res.status, body: await res.text(), ...(instance && { instance }) };
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      return {
        error: `${err instanceof Error ? err.message : String(err)}${cause ? ` (${cause.code ?? cause.message})` : ""}`,
      };
    }
  };
}
