/** An in-process push signal: the debounce driver announces pushes, open xDS streams listen. */
import type { ResourceChange } from "./flush.ts";

/**
 * A push: its version and, when known, every resource it changed (the flush's `changes`, each
 * upsert with its version and encoded bytes, so a listener answers without reading the store).
 * The same change objects reach every listener: they must never be mutated or copied per listener.
 * `changes` absent means "unknown" (a recovered flush, the sync gate opening): listeners must
 * re-read everything they serve.
 */
export type PushListener = (version: number, changes?: readonly ResourceChange[]) => void;

export interface PushSignal {
  /** Listens for pushes; returns the function that stops listening. */
  subscribe(listener: PushListener): () => void;
  /** Announces a push (with what it changed when known); a listener that throws does not stop the others. */
  emit(version: number, changes?: readonly ResourceChange[]): void;
  /** How many listeners are attached (open streams). */
  readonly size: number;
}

/** Creates a signal with no listeners. */
export function createPushSignal(onListenerError?: (err: unknown) => void): PushSignal {
  const listeners = new Set<PushListener>();
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    emit(version, changes) {
      // A copy (a listener may subscribe or leave meanwhile), walked by index: no iterator per stream.
      const all = [...listeners];
      for (let i = 0; i < all.length; i++) {
        try {
          (all[i] as PushListener)(version, changes);
        } catch (err) {
          onListenerError?.(err);
        }
      }
    },
    get size() {
      return listeners.size;
    },
  };
}
