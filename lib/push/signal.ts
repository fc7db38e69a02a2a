/**
 * An in-process push signal: the debounce driver announces pushes, open xDS streams listen. A push
 * reaches its listeners in slices of at most `sliceMs`, with a yield to the event loop between
 * them, so telling many streams never holds the loop for the whole fan-out: sockets flush the
 * first streams' responses while the later ones are still being answered, and /ready, ingest and
 * ACKs run between slices.
 */

import { yieldToEventLoop } from "../pace.ts";
import { gatherPushes, type Push, type PushListener, type PushSignal } from "../resources/changes.ts";

export interface PushSignalOptions {
  /** Longest run of listener calls between two yields (ms), past the first `minPerSlice`; default 2. */
  sliceMs?: number;
  /**
   * Listeners told in each slice before the clock is read; default 16. Fewer listeners than this
   * (a sidecar's few streams, a test's) are always told before emit returns, however long each takes.
   */
  minPerSlice?: number;
  /** Monotonic clock (ms); default performance.now. Injected by tests. */
  now?: () => number;
  /** How to yield between slices; default yieldToEventLoop (lib/pace.ts). Injected by tests. */
  yieldNow?: () => Promise<void>;
}

/** Default slice: long enough for many streams' answers, far under the 50 ms a task may hold the loop. */
export const defaultSliceMs = 2;

/**
 * Changes a waiting push may gather (pushes announced while an earlier one is still being told join
 * the one waiting behind it): past this it says "unknown" instead, and its listeners re-read
 * everything, as a stream does that has more pushes waiting than it keeps (lib/xds/ads-stream.ts).
 */
export const maxGatheredChanges = 10_000;

/** A push being told, or waiting its turn: whom it reaches (taken when it was announced) and how far it got. */
interface Announcement {
  push: Push;
  listeners: PushListener[];
  next: number;
}

/** Creates a signal with no listeners. */
export function createPushSignal(
  onListenerError?: (err: unknown) => void,
  options: PushSignalOptions = {},
): PushSignal {
  const sliceMs = options.sliceMs ?? defaultSliceMs;
  const minPerSlice = options.minPerSlice ?? 16;
  const now = options.now ?? (() => performance.now());
  const yieldNow = options.yieldNow ?? yieldToEventLoop;
  const listeners = new Set<PushListener>();
  // The push being told first; at most one more waits behind it (later ones join it).
  const queue: Announcement[] = [];
  let telling = false;

  /** Tells the queued pushes in order until the slice is used up; then yields and goes on. */
  function tell(): void {
    telling = true;
    const started = now();
    let told = 0;
    while (queue.length > 0) {
      const a = queue[0] as Announcement;
      const { listeners: all } = a;
      while (a.next < all.length) {
        if (told >= minPerSlice && now() - started >= sliceMs) {
          void yieldNow().then(tell);
          return;
        }
        const listener = all[a.next++] as PushListener;
        // Left since the push was announced: its stream is gone.
        if (!listeners.has(listener)) continue;
        told++;
        try {
          listener(a.push);
        } catch (err) {
          onListenerError?.(err);
        }
      }
      queue.shift();
    }
    telling = false;
  }

  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    emit(push) {
      const waiting = queue.length > 1 ? (queue[queue.length - 1] as Announcement) : undefined;
      if (waiting) {
        // Not begun yet: this push joins it, for whoever listens now. A listener gets both pushes
        // at once, as its own stream would gather them while busy.
        waiting.push = gatherPushes([waiting.push, push], maxGatheredChanges);
        waiting.listeners = [...listeners];
        return;
      }
      queue.push({ push, listeners: [...listeners], next: 0 });
      if (!telling) tell();
    },
    get size() {
      return listeners.size;
    },
  };
}
