/**
 * Runs lib/relay/kind-machine for one kind with real I/O: paged lists over kube-http, watches with
 * client-node's Watch (allowWatchBookmarks, resume from the last resourceVersion; its 30s inactivity
 * timeout is a clean end, lib/relay/watch-end.ts), waits on timers.
 * One operation at a time; starting one ends the one before.
 */
import { type KubeConfig, Watch } from "@kubernetes/client-node";
import type { BackoffOptions } from "../../../lib/relay/backoff.ts";
import type { DeliverySender } from "../../../lib/relay/delivery.ts";
import {
  initialKindState,
  type KindAction,
  type KindContext,
  type KindInput,
  type KindState,
  step,
} from "../../../lib/relay/kind-machine.ts";
import { type KindSpec, kindPath, kindQuery } from "../../../lib/relay/kinds.ts";
import { objectResourceVersion, type WatchEvent } from "../../../lib/relay/list.ts";
import { watchEnd } from "../../../lib/relay/watch-end.ts";
import { KubeHttpError } from "./kube-http.ts";
import { listKind } from "./lister.ts";

/** What a kind watcher needs. */
export interface KindWatcherDeps {
  kc: KubeConfig;
  sender: DeliverySender;
  log: (line: string) => void;
  listPageSize: number;
  backoff: BackoffOptions;
  random?: () => number;
  /** A watch that ends cleanly after this long is resumed at once (default 1s). */
  healthyWatchMs?: number;
  /** Log one line per event queued. */
  logEvents?: boolean;
  /** Asked of the API server per watch; the relay also ends a watch 30s after it (default 5-10 min). */
  watchTimeoutSeconds?: () => number;
}

/** Commands for one kind; see kind-machine's inputs. */
export interface KindWatcher {
  readonly kind: KindSpec;
  start(): void;
  resync(): void;
  pause(): void;
  resume(): void;
  stop(): void;
  state(): KindState;
}

/** Builds the watcher of one kind (not started). */
export function createKindWatcher(kind: KindSpec, deps: KindWatcherDeps): KindWatcher {
  const random = deps.random ?? Math.random;
  const ctx: KindContext = {
    backoff: deps.backoff,
    random,
    now: () => Date.now(),
    healthyWatchMs: deps.healthyWatchMs ?? 1000,
  };
  const watchTimeout = deps.watchTimeoutSeconds ?? (() => Math.round(300 * (1 + random())));
  const path = kindPath(kind);
  const watcher = new Watch(deps.kc);
  let state = initialKindState();
  let cancelCurrent: (() => void) | undefined;

  const cancel = () => {
    const c = cancelCurrent;
    cancelCurrent = undefined;
    c?.();
  };

  function dispatch(input: KindInput): void {
    const [next, actions] = step(state, input, ctx);
    state = next;
    for (const a of actions) run(a);
  }

  function run(a: KindAction): void {
    switch (a.do) {
      case "log":
        deps.log(`relay: ${kind.kind}: ${a.line}`);
        return;
      case "event":
        if (deps.logEvents) deps.log(`relay: ${kind.kind}: queued ${describeEvent(a.event)}`);
        deps.sender.event(kind.kind, a.event);
        return;
      case "resync":
        deps.log(
          `relay: ${kind.kind}: listed ${a.list.items.length} at resourceVersion ${a.list.metadata.resourceVersion}`,
        );
        deps.sender.resync(kind.kind, a.list);
        return;
      case "cancel":
        cancel();
        return;
      case "wait": {
        cancel();
        const h = setTimeout(() => dispatch({ type: "timer", op: a.op }), a.ms);
        cancelCurrent = () => clearTimeout(h);
        return;
      }
      case "list": {
        cancel();
        const ac = new AbortController();
        cancelCurrent = () => ac.abort();
        listKind(deps.kc, kind, deps.listPageSize, ac.signal).then(
          (list) => dispatch({ type: "listed", op: a.op, list }),
          (err: unknown) =>
            dispatch({
              type: "listFailed",
              op: a.op,
              ...(err instanceof KubeHttpError && { status: err.status }),
              message: err instanceof Error ? err.message : String(err),
            }),
        );
        return;
      }
      case "watch":
        cancel();
        startWatch(a.op, a.rv);
        return;
    }
  }

  function startWatch(op: number, rv: string | undefined): void {
    let aborted = false;
    let controller: AbortController | undefined;
    const timeoutSeconds = watchTimeout();
    // The API server ends the watch after timeoutSeconds; if it does not, a stuck connection is recycled.
    // Dispatched as a clean end: the machine watches again from the last resourceVersion, and
    // starting that watch cancels this one.
    const ceiling = setTimeout(
      () => dispatch({ type: "watchEnded", op, now: Date.now() }),
      (timeoutSeconds + 30) * 1000,
    );
    cancelCurrent = () => {
      aborted = true;
      clearTimeout(ceiling);
      controller?.abort();
    };
    const query = { ...kindQuery(kind), allowWatchBookmarks: true, resourceVersion: rv, timeoutSeconds };
    watcher
      .watch(
        path,
        query,
        (type: string, object: unknown) => dispatch({ type: "watchEvent", op, event: { type, object } }),
        (err: unknown) => {
          clearTimeout(ceiling);
          dispatch({ type: "watchEnded", op, now: Date.now(), ...watchEnd(err) });
        },
      )
      .then(
        (c) => {
          controller = c;
          if (aborted) c.abort();
        },
        (err: unknown) => dispatch({ type: "watchEnded", op, now: Date.now(), error: String(err) }),
      );
  }

  return {
    kind,
    start: () => dispatch({ type: "start" }),
    resync: () => dispatch({ type: "resync" }),
    pause: () => dispatch({ type: "pause" }),
    resume: () => dispatch({ type: "resume" }),
    stop: () => dispatch({ type: "stop" }),
    state: () => state,
  };
}

function describeEvent(e: WatchEvent): string {
  const m = (e.object as { metadata?: { name?: string; namespace?: string } } | null)?.metadata;
  const name = m?.namespace ? `${m.namespace}/${m.name}` : m?.name;
  return `${e.type} ${name} rv ${objectResourceVersion(e.object)}`;
}
