/**
 * Runs one ADS stream, SotW or Delta: requests from the proxy and push signals are handled one
 * at a time, in arrival order, and the session's responses are yielded to the transport.
 * Pushes that arrive while one is pending coalesce into one. Each request may be checked first;
 * a refused request ends this stream (and only this one) with the check's error.
 *
 * Bounded both ways: a request is read from the transport only once the one before it was taken
 * for handling, so a client that keeps sending while it reads nothing is held back by HTTP/2
 * flow control instead of filling our heap; and a response is yielded only when the transport
 * asks for the next one (connect-node awaits the socket's drain), so responses never pile up.
 */
import type { ResourceChange } from "../lib/push/flush.ts";
import type { PushSignal } from "../lib/push/signal.ts";

/** What the stream needs of a session (lib/xds/sotw.ts and lib/xds/delta.ts implement it). */
export interface StreamSession<Req, Res> {
  onRequest(req: Req): Promise<Res[]>;
  /**
   * A push: `changed` lists every resource changed by the pushes coalesced into this one, or is
   * undefined when one of them did not say (then the session re-reads everything).
   */
  onPush(changed?: readonly ResourceChange[]): Promise<Res[]>;
}

/** What the host does around one stream; the stream runs them itself, so no wrapper generator re-yields each response. */
export interface StreamHooks {
  /** Runs first (at the transport's first read); a throw refuses the stream with that error. */
  open?: () => void;
  /** Runs last, once: `opened` says whether `open` had succeeded. */
  close?: (opened: boolean) => void;
  /** Maps an error ending the stream (e.g. a response too large) to the one the transport sends. */
  mapError?: (error: unknown) => unknown;
}

/**
 * The most changes a stream keeps for pushes it has not yet taken. A stream that stops reading
 * would otherwise keep every pushed body alive; past this it forgets them and re-reads everything
 * when it catches up (the answer is the same, only dearer).
 */
export const maxPendingChanges = 10_000;

type Input<Req> = { kind: "request"; req: Req } | { kind: "push" } | { kind: "end"; error?: unknown };

/**
 * Yields the session's responses until the proxy closes the stream or `signal` aborts. `check`
 * (optional) returns the error to end the stream with when a request is refused; it runs when the
 * request's turn comes, so it sees the session as every earlier request left it. `hooks` (optional)
 * admit, release and map the errors of the stream (see StreamHooks).
 */
export async function* runAdsStream<Req, Res>(
  requests: AsyncIterable<Req>,
  session: StreamSession<Req, Res>,
  pushes: PushSignal,
  signal: AbortSignal,
  check?: (req: Req) => Error | undefined,
  hooks: StreamHooks = {},
): AsyncGenerator<Res> {
  try {
    hooks.open?.();
  } catch (e) {
    hooks.close?.(false);
    throw e;
  }
  // At most one request, one push and one end wait here (the reader below waits its turn).
  const inbox: Input<Req>[] = [];
  let wake: (() => void) | undefined;
  let taken: (() => void) | undefined;
  let closed = false;
  let pushPending = false;
  // What the pushes waiting here changed; undefined once one of them did not say.
  let pendingChanges: (readonly ResourceChange[])[] | undefined = [];
  let pendingCount = 0;
  const deliver = (input: Input<Req>) => {
    inbox.push(input);
    wake?.();
  };
  const unsubscribe = pushes.subscribe((_version, changes) => {
    pendingCount += changes?.length ?? 0;
    if (changes === undefined || pendingCount > maxPendingChanges) pendingChanges = undefined;
    else pendingChanges?.push(changes);
    if (pushPending) return;
    pushPending = true;
    deliver({ kind: "push" });
  });
  // The signal's state, kept here: reading `aborted` of a composite signal per input costs more.
  let aborted = signal.aborted;
  const onAbort = () => {
    aborted = true;
    deliver({ kind: "end" });
  };
  const close = () => {
    closed = true;
    taken?.();
  };
  signal.addEventListener("abort", onAbort);
  void (async () => {
    try {
      for await (const req of requests) {
        const wasTaken = new Promise<void>((resolve) => {
          taken = resolve;
        });
        deliver({ kind: "request", req });
        // Read the next request only once this one is being handled: one request in memory.
        await wasTaken;
        if (closed) return;
      }
      deliver({ kind: "end" });
    } catch (error) {
      deliver({ kind: "end", error });
    }
  })();
  try {
    while (!aborted) {
      const input = inbox.shift();
      if (input?.kind === "request") taken?.();
      if (!input) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
        continue;
      }
      if (input.kind === "end") {
        if (input.error !== undefined && !aborted) throw input.error;
        return;
      }
      let responses: Res[];
      if (input.kind === "push") {
        pushPending = false;
        // One push waiting (the usual case): its changes array as announced, shared by every stream.
        const changed = pendingChanges?.length === 1 ? pendingChanges[0] : pendingChanges?.flat();
        pendingChanges = [];
        pendingCount = 0;
        responses = await session.onPush(changed);
      } else {
        const refused = check?.(input.req);
        if (refused) throw refused;
        responses = await session.onRequest(input.req);
      }
      for (const r of responses) yield r;
    }
  } catch (e) {
    throw hooks.mapError ? hooks.mapError(e) : e;
  } finally {
    close();
    unsubscribe();
    signal.removeEventListener("abort", onAbort);
    hooks.close?.(true);
  }
}
