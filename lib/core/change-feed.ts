/**
 * The change feed of one mesh core: every push (its version and exactly the resources it changed)
 * and every opening of the sync gate reach the open streams once, in announcement order. Single
 * streams (ADS) subscribe as listeners; a hub that fans out to many (the poll hub behind Poll and
 * Watch) attaches once and says how many streams it holds, so the feed can count what it reaches.
 */

import { createPushSignal } from "../push/signal.ts";
import type { Push, PushSignal } from "../resources/changes.ts";

/** A fan-out point fed by the feed: it wakes its own streams (lib/xds/poll-hub.ts fits). */
export interface FeedHub {
  /** A push; its `changes` undefined means anything may have changed. */
  publish(push: Push): void;
  /** Streams (and waiting polls) the hub holds now. */
  readonly open: number;
}

/**
 * The feed: a PushSignal (what ADS streams subscribe to) plus attached hubs. Push versions go out
 * strictly increasing: a push version at or below `version` is dropped (it was announced already,
 * by the core that ran the flush or by the store follower that read it from the push log, so a
 * push is never announced twice); version 0 (the sync gate opening) always goes out.
 */
export interface ChangeFeed extends PushSignal {
  /** The highest push version announced (or skipped to); 0 before any. */
  readonly version: number;
  /**
   * Moves `version` up to `version` without announcing anything: what a host's streams read from
   * the store at start already includes every push up to it (a no-op when it is not higher).
   */
  skipTo(version: number): void;
  /**
   * Attaches a hub: it gets every announcement once the listeners' first slice was told (the rest
   * are told in slices: lib/push/signal.ts); returns the detach function.
   */
  attach(hub: FeedHub): () => void;
  /** Streams the feed reaches now: its listeners plus every hub's open streams. */
  readonly streams: number;
}

/** A feed with nothing attached; `onError` takes a listener's or a hub's exception (the rest still run). */
export function createChangeFeed(onError: (err: unknown) => void): ChangeFeed {
  const signal = createPushSignal(onError);
  const hubs = new Set<FeedHub>();
  let announced = 0;
  return {
    subscribe: signal.subscribe,
    emit(push) {
      const { version } = push;
      if (version > 0) {
        if (version <= announced) return;
        announced = version;
      }
      signal.emit(push);
      for (const hub of [...hubs]) {
        try {
          hub.publish(push);
        } catch (err) {
          onError(err);
        }
      }
    },
    get version() {
      return announced;
    },
    skipTo(version) {
      if (version > announced) announced = version;
    },
    attach(hub) {
      hubs.add(hub);
      return () => hubs.delete(hub);
    },
    get size() {
      return signal.size;
    },
    get streams() {
      let n = signal.size;
      for (const hub of hubs) n += hub.open;
      return n;
    },
  };
}
