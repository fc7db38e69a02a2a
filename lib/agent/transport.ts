/**
 * Which transport carries the agent's upstream, and when it changes: Delta ADS (a Node edgepilot's
 * XDS_PORT), or Connect `Watch` (a server stream per type URL, e.g. to the Worker) that falls back
 * to long-polled `Poll` where something between cuts server streams. Pure: the machine
 * (machine.ts) asks it what to do when a Watch session ends and when to try Watch again.
 *
 * The rule. A Watch session is "cut" when it had connected (response headers came) and then ended
 * within `watchMinLifeMs` with a transport-ish status (ok, unavailable, internal, unknown,
 * deadline_exceeded, canceled, aborted, data_loss; a stream that ends without Connect's end-of-stream
 * message is reported as unavailable by the driver; a Watch without its first answer in time is
 * deadline_exceeded, a cut even before headers came). `cutsBeforePoll` cuts in a row switch to Poll;
 * a Watch refused as unsupported (unimplemented: HTTP 404 from something that routes only unary
 * calls) switches at once. An upstream that cannot be reached, or refuses the token, is not a
 * cut: Poll would fare no better, so the agent retries Watch with backoff. While on Poll after a
 * fallback, Watch is tried again every `watchRetryMs`; one more cut sends it back to Poll.
 */

/** How the agent is configured to ask its upstream (EDGEPILOT_AGENT_UPSTREAM_PROTOCOL). */
export type UpstreamProtocol = "ads" | "watch" | "poll";

/** Every protocol, in the order --help lists them. */
export const upstreamProtocols: readonly UpstreamProtocol[] = ["ads", "watch", "poll"];

/** The HTTP version of a Connect upstream (EDGEPILOT_AGENT_UPSTREAM_HTTP). */
export type UpstreamHttp = "2" | "1.1";

/** Every HTTP version, the default first. */
export const upstreamHttps: readonly UpstreamHttp[] = ["2", "1.1"];

/** What carries the current upstream session. */
export type Transport = "ads" | "watch" | "poll";

/** The transport in use and what the fallback rule remembers. */
export interface TransportState {
  current: Transport;
  /** Watch sessions cut short in a row. */
  cuts: number;
  /** While polling after a fallback: when to try Watch again (ms); 0 when Poll was configured or Watch is in use. */
  retryWatchAt: number;
}

/** The fallback rule's tunables. */
export interface TransportOptions {
  /** A Watch session that ends sooner than this after connecting is cut (ms). */
  watchMinLifeMs: number;
  /** Cuts in a row that switch to Poll. */
  cutsBeforePoll: number;
  /** How long after a fallback Watch is tried again (ms). */
  watchRetryMs: number;
}

/**
 * Defaults: a Watch that dies within 30 s three times in a row is being cut (AWS API Gateway ends
 * any call at 29 s; an idle Watch can go that long without a byte); Watch is retried every 5 min.
 */
export const defaultTransportOptions: TransportOptions = {
  watchMinLifeMs: 30_000,
  cutsBeforePoll: 3,
  watchRetryMs: 300_000,
};

/**
 * How long a long poll may be held (the PollRequest's `wait`): 25 s, under the shortest common
 * limit on a request in flight (AWS API Gateway's 29 s) and far under idle timeouts (ALB 60 s,
 * Cloudflare's ~100 s), so a poll ends by itself before anything between cuts it.
 */
export const pollWaitMs = 25_000;

/** The transport a new agent starts with. */
export function initialTransport(protocol: UpstreamProtocol): TransportState {
  return { current: protocol, cuts: 0, retryWatchAt: 0 };
}

/** The statuses of a stream that something between cut (as against a refusal Poll would get too). */
const cutCodes: ReadonlySet<string> = new Set([
  "ok",
  "unavailable",
  "internal",
  "unknown",
  "deadline_exceeded",
  "canceled",
  "aborted",
  "data_loss",
]);

/** How a Watch session ended: its status, whether it connected, how long it lived after that. */
export interface WatchEnd {
  code: string;
  message: string;
  connected: boolean;
  livedMs: number;
  now: number;
}

/** After a Watch session ended: stay on Watch, or fall back to Poll (with the log line saying why). */
export function afterWatchEnded(
  t: TransportState,
  e: WatchEnd,
  o: TransportOptions,
): { next: TransportState; line?: string } {
  if (t.current !== "watch") return { next: t };
  const retry = `Watch is tried again in ${Math.round(o.watchRetryMs / 1000)}s`;
  const poll = (why: string) => ({
    next: { current: "poll" as const, cuts: 0, retryWatchAt: e.now + o.watchRetryMs },
    line: `${why}; falling back to long-polled Poll (${retry})`,
  });
  if (e.code === "unimplemented") return poll(`Watch refused as unsupported (${e.code})`);
  // No first answer in time (deadline_exceeded) is a cut even before the headers came: a proxy
  // that buffers the whole response holds those back too.
  const heldBack = e.code === "deadline_exceeded";
  if ((!e.connected && !heldBack) || !cutCodes.has(e.code)) return { next: t };
  if (e.livedMs >= o.watchMinLifeMs) return { next: { ...t, cuts: 0 } };
  const cuts = t.cuts + 1;
  if (cuts < o.cutsBeforePoll) return { next: { ...t, cuts } };
  const within = Math.round(o.watchMinLifeMs / 1000);
  return poll(`Watch cut ${cuts} time(s) in a row within ${within}s of connecting (last: ${e.code})`);
}

/** While polling after a fallback: whether Watch is due to be tried again at `now`. */
export function watchDue(t: TransportState, now: number): boolean {
  return t.current === "poll" && t.retryWatchAt > 0 && now >= t.retryWatchAt;
}

/** Tries Watch again: one more cut goes back to Poll. */
export function retryWatch(o: TransportOptions): { next: TransportState; line: string } {
  return {
    next: { current: "watch", cuts: Math.max(0, o.cutsBeforePoll - 1), retryWatchAt: 0 },
    line: `trying Watch again (one more cut within ${Math.round(o.watchMinLifeMs / 1000)}s goes back to Poll)`,
  };
}

/** A transport's name in log lines. */
export function transportName(t: Transport): string {
  return t === "ads" ? "Delta ADS" : t === "watch" ? "Connect Watch" : "Connect Poll";
}
