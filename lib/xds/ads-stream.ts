/**
 * Runs one ADS stream, SotW or Delta: requests from the proxy and push signals are handled one
 * at a time, in arrival order, and the session's responses are handed to the transport.
 * Pushes that arrive while one is pending coalesce into one. Each request may be checked first;
 * a refused request ends this stream (and only this one) with the check's error.
 *
 * Bounded both ways: a request is read from the transport only once the one before it was taken
 * for handling, so a client that keeps sending while it reads nothing is held back by HTTP/2
 * flow control instead of filling our heap; and the next input is handled only once the transport
 * took the response before it (the socket drained), so responses never pile up.
 */
import { gatherPushes, type Push, type PushSignal } from "../resources/changes.ts";

/**
 * What the stream needs of a session (lib/xds/sotw.ts and lib/xds/delta.ts implement it): one call
 * per input, answered at once (an array: a plain ACK, a push answered from memory, no promise made)
 * or with a promise the stream awaits before it handles the next input.
 */
export interface StreamSession<Req, Res> {
  /** A request, after its check passed. */
  onRequest(req: Req): Res[] | Promise<Res[]>;
  /**
   * A push: the pushes coalesced into this one as one (gatherPushes: its `changes` undefined when one
   * of them did not say, then the session re-reads everything).
   */
  onPush(push: Push): Res[] | Promise<Res[]>;
}

/**
 * Requests that can also be handed over at once (functions/node/grpc-messages.ts MessageReader):
 * while the stream waits for its next request, each one that arrives is offered to `take` first,
 * which answers true when it handled it there (the stream was idle: no promise settled for it).
 */
export interface OfferingRequests<Req> extends AsyncIterable<Req> {
  offerTo(take: (req: Req) => boolean): void;
}

/** What the host does around one stream; the stream runs them itself, so no wrapper generator re-yields each response. */
export interface StreamHooks {
  /** Runs first (at the transport's first read); a throw refuses the stream with that error. */
  open?: () => void;
  /** Runs last, once: `opened` says whether `open` had succeeded. */
  close?: (opened: boolean) => void;
  /** Maps an error ending the stream (e.g. a response too large) to the one the transport sends. */
  mapError?: (error: unknown) => unknown;
  /** Runs as the session begins answering a push (`push`) or a request (metrics: answer time). */
  answer?: (push: boolean) => void;
  /** Runs when the session answered, before its `responses` responses are written (metrics: convergence). */
  answered?: (push: boolean, responses: number) => void;
}

/**
 * The most changes a stream keeps for pushes it has not yet taken. A stream that stops reading
 * would otherwise keep every pushed body alive; past this it forgets them and re-reads everything
 * when it catches up (the answer is the same, only dearer).
 */
export const maxPendingChanges = 10_000;

type Input<Req, Res> =
  | { kind: "request"; req: Req }
  | { kind: "push" }
  | { kind: "answer"; push: boolean; responses: Promise<Res[]> }
  | { kind: "end"; error?: unknown };

/** Where a stream's responses go: a returned promise means "wait until it drained" (backpressure). */
export type ResponseSink<Res> = (response: Res) => void | Promise<void>;

/**
 * Hands the session's responses to `send`, in order, until the proxy closes the stream or `signal`
 * aborts; resolves then (rejects with the error ending the stream). The next input is handled only
 * once `send` returned (or its promise resolved), so responses never pile up. A push to an idle
 * stream costs one wake-up and the session's call: no generator, no per-response promise when
 * `send` writes at once. `check` (optional) returns the error to end the stream with when a request
 * is refused; it runs when the request's turn comes, so it sees the session as every earlier
 * request left it. `hooks` (optional) admit, release and map the errors of the stream (see StreamHooks).
 */
export async function pumpAdsStream<Req, Res>(
  requests: AsyncIterable<Req>,
  session: StreamSession<Req, Res>,
  pushes: PushSignal,
  signal: AbortSignal,
  send: ResponseSink<Res>,
  check?: (req: Req) => Error | undefined,
  hooks: StreamHooks = {},
): Promise<void> {
  try {
    hooks.open?.();
  } catch (e) {
    hooks.close?.(false);
    throw e;
  }
  // At most one answer, one request, one push and one end wait here (the reader below waits its turn).
  const inbox: Input<Req, Res>[] = [];
  let wake: (() => void) | undefined;
  let taken: (() => void) | undefined;
  let closed = false;
  let pushPending = false;
  // The pushes waiting here, and how many changes they carry; past maxPendingChanges they are
  // forgotten for one push that says "unknown" (the stream re-reads everything).
  let pending: Push[] = [];
  let pendingCount = 0;
  const hold = (push: Push) => {
    pendingCount += push.changes?.length ?? 0;
    const first = pending[0];
    const known = first === undefined || first.changes !== undefined;
    if (known && push.changes !== undefined && pendingCount <= maxPendingChanges) {
      pending.push(push);
      return;
    }
    const refresh = push.refresh === true || pending.some((p) => p.refresh === true);
    const { version, context } = push;
    pending = [{ version, ...(refresh && { refresh: true as const }), ...(context && { context }) }];
  };
  const takePending = (): Push => {
    const push = gatherPushes(pending, maxPendingChanges);
    pending = [];
    pendingCount = 0;
    return push;
  };
  const deliver = (input: Input<Req, Res>) => {
    inbox.push(input);
    wake?.();
  };
  // The loop waits for input, nothing in its inbox and no response waiting to drain: a push or a
  // request may be handed to the session right in the feed's or the reader's call, and when the
  // session answers at once, written there, with no wake-up and no promise.
  let parked = false;
  let draining: Promise<void> | undefined;
  /** Writes `responses` in order; when one must drain, the rest and the next input wait for it. */
  const writeNow = (responses: Res[]) => {
    for (let i = 0; i < responses.length; i++) {
      const writing = send(responses[i] as Res);
      if (writing) {
        draining = writing.then(async () => {
          for (const r of responses.slice(i + 1)) await send(r);
        });
        return;
      }
    }
  };
  const idle = () => parked && inbox.length === 0 && draining === undefined && !aborted;
  /** The session's answer: written now when it came at once, else awaited by the loop in its turn. */
  const writeOrAwait = (push: boolean, out: Res[] | Promise<Res[]>) => {
    if (Array.isArray(out)) {
      hooks.answered?.(push, out.length);
      writeNow(out);
    } else deliver({ kind: "answer", push, responses: out });
  };
  /**
   * The push of `changed` handed to the session when the stream is idle: true when it was (or it
   * ended the stream), false when it waits for the loop.
   */
  const answerPushNow = (take: () => Push): boolean => {
    if (!idle()) return false;
    try {
      hooks.answer?.(true);
      writeOrAwait(true, session.onPush(take()));
    } catch (error) {
      deliver({ kind: "end", error });
    }
    return true;
  };
  const unsubscribe = pushes.subscribe((push) => {
    // Nothing waits (the usual push): the push as announced, handed over at once when the stream
    // is idle, with nothing recorded.
    const alone =
      !pushPending &&
      pending.length === 0 &&
      (push.changes === undefined || push.changes.length <= maxPendingChanges);
    if (alone && answerPushNow(() => push)) return;
    hold(push);
    if (pushPending) return;
    // Pushes that waited for the stream, answered together (`alone` was tried already).
    if (!alone && answerPushNow(takePending)) return;
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
  // Set once a request handed over at once ended the stream: the reader reads no more.
  let failed = false;
  /**
   * A request whose turn is now (the stream idle) checked and handed to the session at once: true
   * when it was (or it ended the stream: the check refused it, the session threw); false, having
   * done nothing, leaves it to take its turn in the loop.
   */
  const answerNow = (req: Req): boolean => {
    if (failed) return true;
    if (!idle()) return false;
    try {
      const refused = check?.(req);
      if (refused) throw refused;
      hooks.answer?.(false);
      writeOrAwait(false, session.onRequest(req));
    } catch (error) {
      failed = true;
      deliver({ kind: "end", error });
    }
    return true;
  };
  if (typeof (requests as Partial<OfferingRequests<Req>>).offerTo === "function")
    (requests as OfferingRequests<Req>).offerTo(answerNow);
  void (async () => {
    try {
      for await (const req of requests) {
        // Idle: the request's turn is now, handed over here, no loop turn.
        if (answerNow(req)) {
          if (failed) return;
          continue;
        }
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
      if (draining) {
        await draining;
        draining = undefined;
        continue;
      }
      const input = inbox.shift();
      if (input?.kind === "request") taken?.();
      if (!input) {
        parked = true;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        parked = false;
        wake = undefined;
        continue;
      }
      if (input.kind === "end") {
        if (input.error !== undefined && !aborted) throw input.error;
        return;
      }
      let out: Res[] | Promise<Res[]>;
      const push = input.kind === "push" || (input.kind === "answer" && input.push);
      if (input.kind === "answer") out = input.responses;
      else if (input.kind === "push") {
        pushPending = false;
        // One push waiting (the usual case): the push as announced, shared by every stream.
        const gathered = takePending();
        hooks.answer?.(true);
        out = session.onPush(gathered);
      } else {
        const refused = check?.(input.req);
        if (refused) throw refused;
        hooks.answer?.(false);
        out = session.onRequest(input.req);
      }
      const responses = Array.isArray(out) ? out : await out;
      hooks.answered?.(push, responses.length);
      for (const r of responses) {
        const writing = send(r);
        if (writing) await writing;
      }
    }
  } catch (e) {
    throw hooks.mapError ? hooks.mapError(e) : e;
  } finally {
    // An answer the loop will not await (the stream ended first) may still fail: not unhandled.
    for (const input of inbox) if (input.kind === "answer") input.responses.catch(() => {});
    close();
    unsubscribe();
    signal.removeEventListener("abort", onAbort);
    hooks.close?.(true);
  }
}

/**
 * pumpAdsStream as an async generator (connect's handlers, the tests): yields the session's
 * responses; the stream waits for each to be pulled, as a generator's body would. Ending the
 * iteration early (return) aborts the stream and resolves once it cleaned up.
 */
export function runAdsStream<Req, Res>(
  requests: AsyncIterable<Req>,
  session: StreamSession<Req, Res>,
  pushes: PushSignal,
  signal: AbortSignal,
  check?: (req: Req) => Error | undefined,
  hooks: StreamHooks = {},
): AsyncGenerator<Res> {
  return pulled<Res>(
    (both, send) => pumpAdsStream(requests, session, pushes, both, send, check, hooks),
    signal,
  );
}

/**
 * Runs `run` with a sink that waits for each response to be pulled from the returned generator;
 * the generator ends when `run` does (with its error, after the responses it sent).
 */
export async function* pulled<Res>(
  run: (signal: AbortSignal, send: (response: Res) => Promise<void>) => Promise<void>,
  signal: AbortSignal,
): AsyncGenerator<Res> {
  const stop = new AbortController();
  let waiting: { response: Res; taken: () => void } | undefined;
  let taken: (() => void) | undefined;
  let wake: (() => void) | undefined;
  let ended: { error?: unknown } | undefined;
  const send = (response: Res) =>
    new Promise<void>((resolve) => {
      waiting = { response, taken: resolve };
      wake?.();
    });
  const finished = run(AbortSignal.any([signal, stop.signal]), send).then(
    () => {
      ended = {};
      wake?.();
    },
    (error: unknown) => {
      ended = { error };
      wake?.();
    },
  );
  try {
    for (;;) {
      const next = waiting;
      if (next) {
        waiting = undefined;
        taken = next.taken;
        yield next.response;
        taken = undefined;
        next.taken();
        continue;
      }
      if (ended) {
        if ("error" in ended) throw ended.error;
        return;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
  } finally {
    stop.abort();
    taken?.();
    waiting?.taken();
    await finished;
  }
}
