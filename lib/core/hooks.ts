/**
 * The core's observers: what metrics and debug surfaces hang on (one list per core, so every host
 * reports the same events). Observers are told after the fact (a push as it goes out, before
 * streams answer it) and cannot change what the core does; one that throws is logged and the
 * others still run.
 */
import type { ApplySummary } from "../ingest/apply.ts";
import type { WatchEvent } from "../ingest/events.ts";
import { logSafe } from "../log-safe.ts";
import type { DebounceTurn } from "../push/run.ts";

/** One flush of a debounce turn (a push, or a no-op flush that found nothing to change). */
export type Flush = DebounceTurn["flushes"][number];

/** An ingest call the core applied. */
export interface IngestReport {
  call: "events" | "resync" | "admission";
  cluster: string;
  /** The resync's kind (only for `resync`). */
  kind?: string;
  summary: ApplySummary;
  /** The watch events applied (`events` and `admission`; shared, read-only), for per-kind counts. */
  events?: readonly WatchEvent[];
}

/** A debounce turn the core ran, with when it began and ended (the core's clock). */
export interface TurnReport {
  turn: DebounceTurn;
  startedAt: number;
  endedAt: number;
}

/** A push announced on the change feed: its flush, and how long after its first event it went out. */
export interface PushReport {
  flush: Flush;
  latencyMs: number;
  /** Streams the feed reached when it was announced. */
  streams: number;
}

/** The kinds of xDS stream a proxy holds: ADS SotW, ADS Delta, DeltaPollService Watch. */
export type StreamKind = "sotw" | "delta" | "watch";

/**
 * What an observer may listen to; every method is optional. The xDS methods (onStream* to onNack)
 * run per stream, per response and per ACK: they take plain values (nothing is built for them)
 * and must stay a few counter bumps.
 */
export interface MeshObserver {
  onIngest?(report: IngestReport): void;
  onTurn?(report: TurnReport): void;
  /** Told as the push goes out, before any stream answers it. */
  onPush?(report: PushReport): void;
  /** A stream's first request arrived: its kind and its node's ISTIO_VERSION metadata ("" when absent). */
  onStreamOpened?(kind: StreamKind, version: string): void;
  /** A stream that was reported opened ended. */
  onStreamClosed?(kind: StreamKind, version: string): void;
  /**
   * A response was handed to the transport: its type URL, seconds since the stream began answering
   * the push or request it answers, and seconds the transport took to take it (undefined when the
   * transport does not say: a unary Poll).
   */
  onResponse?(typeUrl: string, answerSeconds: number, sendSeconds: number | undefined): void;
  /** A stream handed the transport every response a push asked of it, `seconds` after the push's first event. */
  onConverged?(seconds: number): void;
  /** A request ACKed a response of `typeUrl` (a response_nonce and no error_detail). */
  onAck?(typeUrl: string): void;
  /** A request NACKed a response of `typeUrl` (it carries error_detail). */
  onNack?(typeUrl: string): void;
}

/** What xDS transports report through the hooks (see the MeshObserver methods of the same names). */
export interface XdsReporter {
  streamOpened(kind: StreamKind, version: string): void;
  streamClosed(kind: StreamKind, version: string): void;
  response(typeUrl: string, answerSeconds: number, sendSeconds: number | undefined): void;
  /** `at`: now on the core's clock; the observers get the seconds since the latest push's first event. */
  converged(at: number): void;
  ack(typeUrl: string): void;
  nack(typeUrl: string): void;
}

/** The observer list: hosts and surfaces add observers, the core reports to all of them. */
export interface MeshHooks {
  /** Adds an observer; returns the function that removes it. */
  observe(observer: MeshObserver): () => void;
  ingest(report: IngestReport): void;
  turn(report: TurnReport): void;
  push(report: PushReport): void;
  /** The xDS transports' reports (streams, responses, ACKs and NACKs). */
  readonly xds: XdsReporter;
}

/** An empty list; `log` takes the line for an observer that threw. */
export function createMeshHooks(log: (line: string) => void): MeshHooks {
  const observers = new Set<MeshObserver>();
  const failed = (method: keyof MeshObserver, err: unknown) =>
    log(`core: an ${method} observer failed: ${logSafe(err instanceof Error ? err.message : err)}`);
  const tell = (method: keyof MeshObserver, call: (o: MeshObserver) => void) => {
    for (const o of [...observers]) {
      try {
        call(o);
      } catch (err) {
        failed(method, err);
      }
    }
  };
  // The first event of the latest push announced (the core's clock), for convergence.
  let pushStart: number | undefined;
  // The per-event xDS reports read `list`, a copy-on-write array of the observers (replaced, never
  // changed, when one is added or removed): no closure, no copy per event, and indexed loops (a
  // for-of on the server's per-ACK path still made an iterator result per observer).
  let list: readonly MeshObserver[] = [];
  const xds: XdsReporter = {
    streamOpened(kind, version) {
      for (let i = 0; i < list.length; i++)
        try {
          (list[i] as MeshObserver).onStreamOpened?.(kind, version);
        } catch (err) {
          failed("onStreamOpened", err);
        }
    },
    streamClosed(kind, version) {
      for (let i = 0; i < list.length; i++)
        try {
          (list[i] as MeshObserver).onStreamClosed?.(kind, version);
        } catch (err) {
          failed("onStreamClosed", err);
        }
    },
    response(typeUrl, answerSeconds, sendSeconds) {
      for (let i = 0; i < list.length; i++)
        try {
          (list[i] as MeshObserver).onResponse?.(typeUrl, answerSeconds, sendSeconds);
        } catch (err) {
          failed("onResponse", err);
        }
    },
    converged(at) {
      if (pushStart === undefined) return;
      const seconds = Math.max(0, at - pushStart) / 1000;
      for (let i = 0; i < list.length; i++)
        try {
          (list[i] as MeshObserver).onConverged?.(seconds);
        } catch (err) {
          failed("onConverged", err);
        }
    },
    ack(typeUrl) {
      for (let i = 0; i < list.length; i++)
        try {
          (list[i] as MeshObserver).onAck?.(typeUrl);
        } catch (err) {
          failed("onAck", err);
        }
    },
    nack(typeUrl) {
      for (let i = 0; i < list.length; i++)
        try {
          (list[i] as MeshObserver).onNack?.(typeUrl);
        } catch (err) {
          failed("onNack", err);
        }
    },
  };
  return {
    xds,
    observe(observer) {
      observers.add(observer);
      list = [...observers];
      return () => {
        const removed = observers.delete(observer);
        list = [...observers];
        return removed;
      };
    },
    ingest: (report) => tell("onIngest", (o) => o.onIngest?.(report)),
    turn: (report) => tell("onTurn", (o) => o.onTurn?.(report)),
    push: (report) => {
      if (report.flush.request) pushStart = report.flush.request.start;
      tell("onPush", (o) => o.onPush?.(report));
    },
  };
}
