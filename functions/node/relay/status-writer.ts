/**
 * The relay's status writer: the I/O loop around lib/relay/status-machine.ts. It GETs
 * /v1/gateway-status from the control plane (ingest's token and cluster, If-None-Match), reads each
 * object whose status is not yet ours from the API server and PUTs the merged status to its
 * `/status` subresource with the object's resourceVersion (optimistic concurrency: a 409 means
 * someone wrote first). Rounds run every RELAY_STATUS_INTERVAL and after each delivered batch.
 */
import type { KubeConfig } from "@kubernetes/client-node";
import { logError, logWarn } from "../../../lib/log/line-log.ts";
import type { GatewayApiStatus } from "../../../lib/registry/gateway-api/gateway-status.ts";
import type { BackoffOptions } from "../../../lib/relay/backoff.ts";
import {
  initialStatusState,
  type StatusAction,
  type StatusHttp,
  type StatusInput,
  type StatusOutcome,
  statusStep,
} from "../../../lib/relay/status-machine.ts";
import type { Timers } from "../../../lib/timers.ts";
import { kubeRequest } from "./kube-http.ts";

/** What the writer needs. */
export interface StatusWriterOptions {
  kc: KubeConfig;
  /** The control plane (ingest's base URL, token and this cluster's id). */
  target: { url: string; token: string | undefined; clusterId: string };
  /** A round this often (ms). */
  intervalMs: number;
  timers: Timers;
  backoff: BackoffOptions;
  random: () => number;
  log: (line: string) => void;
  /** Writes per round at most (default 50). */
  maxWritesPerRound?: number;
}

/** Counters by object kind, for the relay's readiness body and tests. */
export type StatusStats = Record<string, Record<StatusOutcome, number>>;

/** A running writer. */
export interface StatusWriter {
  start(): void;
  /** Asks for a round now (a batch was delivered); one in progress is followed by another. */
  poke(): void;
  /** An object the relay saw in a watch event: a settled status someone changed is written again next round. */
  seen(object: Record<string, unknown>): void;
  stop(): void;
  stats(): StatusStats;
}

/** Longest the control plane's answer may take. */
const fetchTimeoutMs = 30_000;

/** Builds the writer (not started). */
export function createStatusWriter(o: StatusWriterOptions): StatusWriter {
  const { timers, log } = o;
  const ctx = {
    backoff: o.backoff,
    random: o.random,
    now: () => timers.now(),
    maxWritesPerRound: o.maxWritesPerRound ?? 50,
  };
  const stopped = new AbortController();
  let state = initialStatusState();
  let interval: unknown;
  let wait: unknown;
  const stats = new Map<string, Record<StatusOutcome, number>>();

  function dispatch(input: StatusInput): void {
    const [next, actions] = statusStep(state, input, ctx);
    state = next;
    for (const a of actions) run(a);
  }

  function run(a: StatusAction): void {
    switch (a.do) {
      case "fetch":
        void fetchStatuses(a.etag).then((answer) => dispatch({ type: "fetched", op: a.op, answer }));
        return;
      case "read":
        void readObject(a.target).then((answer) => dispatch({ type: "read", op: a.op, answer }));
        return;
      case "write":
        void writeStatus(a.target, a.object).then((answer) => dispatch({ type: "wrote", op: a.op, answer }));
        return;
      case "wait":
        wait = timers.setTimeout(() => dispatch({ type: "timer", op: a.op }), a.ms);
        return;
      case "count": {
        const byKind = stats.get(a.kind) ?? { written: 0, unchanged: 0, conflict: 0, failed: 0 };
        byKind[a.outcome]++;
        stats.set(a.kind, byKind);
        return;
      }
      case "log":
        if (a.level === "error") logError(log, a.line);
        else if (a.level === "warn") logWarn(log, a.line);
        else log(a.line);
        return;
    }
  }

  async function fetchStatuses(
    etag: string | undefined,
  ): Promise<Extract<StatusInput, { type: "fetched" }>["answer"]> {
    const headers: Record<string, string> = { accept: "application/json" };
    if (o.target.token !== undefined) headers.authorization = `Bearer ${o.target.token}`;
    if (etag !== undefined) headers["if-none-match"] = etag;
    const url = `${o.target.url}/v1/gateway-status?cluster=${encodeURIComponent(o.target.clusterId)}`;
    try {
      const signal = AbortSignal.any([stopped.signal, AbortSignal.timeout(fetchTimeoutMs)]);
      const res = await fetch(url, { headers, signal });
      const text = await res.text();
      if (res.status !== 200) return { status: res.status };
      const statuses = parseStatuses(text);
      if (statuses === undefined) return { error: "the answer is not { statuses: [...] }" };
      return { status: 200, statuses, etag: res.headers.get("etag") ?? undefined };
    } catch (err) {
      return { error: err instanceof Error ? err.message : String(err) };
    }
  }

  /**
   * The object as the API server holds it now, read with a list selecting its name: the relay may
   * list and watch these kinds already, so writing status needs no `get` beyond the status
   * subresource's `update`. Items of a list carry no apiVersion and kind; the PUT needs them.
   */
  async function readObject(t: GatewayApiStatus): Promise<Extract<StatusInput, { type: "read" }>["answer"]> {
    try {
      const path = collectionPath(t);
      const query = { fieldSelector: `metadata.name=${t.name}` };
      const r = await kubeRequest(o.kc, { method: "GET", path, query, signal: stopped.signal });
      if (r.status !== 200) return statusOf(r);
      const items = (JSON.parse(r.text) as { items?: unknown } | null)?.items;
      if (!Array.isArray(items)) return { error: `GET ${path}: the answer is no list` };
      const item = items.find(
        (i) => (i as { metadata?: { name?: unknown } } | null)?.metadata?.name === t.name,
      );
      if (typeof item !== "object" || item === null) return { status: 404 };
      const apiVersion = t.group === "" ? t.version : `${t.group}/${t.version}`;
      return { status: 200, object: { apiVersion, kind: t.kind, ...(item as Record<string, unknown>) } };
    } catch (err) {
      return { error: err instanceof Error ? err.message : String(err) };
    }
  }

  async function writeStatus(t: GatewayApiStatus, object: Record<string, unknown>): Promise<StatusHttp> {
    try {
      const path = `${collectionPath(t)}/${encodeURIComponent(t.name)}/status`;
      return statusOf(
        await kubeRequest(o.kc, {
          method: "PUT",
          path,
          body: JSON.stringify(object),
          signal: stopped.signal,
        }),
      );
    } catch (err) {
      return { error: err instanceof Error ? err.message : String(err) };
    }
  }

  return {
    start() {
      if (stopped.signal.aborted) return;
      const every = () => {
        interval = timers.setTimeout(() => {
          dispatch({ type: "tick" });
          every();
        }, o.intervalMs);
      };
      every();
      dispatch({ type: "tick" });
    },
    poke: () => dispatch({ type: "tick" }),
    seen: (object) => dispatch({ type: "seen", object }),
    stop() {
      stopped.abort();
      timers.clearTimeout(interval);
      timers.clearTimeout(wait);
      dispatch({ type: "stop" });
    },
    stats: () => Object.fromEntries([...stats].map(([kind, counts]) => [kind, { ...counts }])),
  };
}

/** The object's collection: /apis/<group>/<version>[/namespaces/<ns>]/<resource>, each piece escaped. */
export function collectionPath(t: GatewayApiStatus): string {
  const e = encodeURIComponent;
  const base = t.group === "" ? `/api/${e(t.version)}` : `/apis/${e(t.group)}/${e(t.version)}`;
  const ns = t.namespace === undefined ? "" : `/namespaces/${e(t.namespace)}`;
  return `${base}${ns}/${e(t.resource)}`;
}

function statusOf(r: { status: number; reason?: string }): StatusHttp {
  return { status: r.status, ...(r.reason !== undefined && { reason: reasonOnly(r.reason) }) };
}

/** The Status reason alone ("Conflict"): its message may quote the object, which is never logged. */
function reasonOnly(reason: string): string {
  return reason.split(":")[0]?.trim().slice(0, 64) ?? "";
}

/** The statuses of a control plane answer, or undefined when it is not `{ statuses: GatewayApiStatus[] }`. */
export function parseStatuses(text: string): GatewayApiStatus[] | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  const list = (body as { statuses?: unknown } | null)?.statuses;
  if (!Array.isArray(list)) return undefined;
  const str = (v: unknown) => typeof v === "string";
  const ok = list.every((s: Record<string, unknown> | null) => {
    if (typeof s !== "object" || s === null) return false;
    const { group, version, resource, kind, namespace, name, generation, status } = s;
    return (
      str(group) &&
      str(version) &&
      str(resource) &&
      str(kind) &&
      str(name) &&
      (namespace === undefined || str(namespace)) &&
      (generation === undefined || Number.isInteger(generation)) &&
      typeof status === "object" &&
      status !== null &&
      !Array.isArray(status)
    );
  });
  return ok ? (list as GatewayApiStatus[]) : undefined;
}
