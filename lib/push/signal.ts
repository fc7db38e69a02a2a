/** An in-process push signal: the debounce driver announces pushes, open xDS streams listen. */

export type PushListener = (version: number) => void;

export interface PushSignal {
  /** Listens for pushes; returns the function that stops listening. */
  subscribe(listener: PushListener): () => void;
  /** Announces a push; a listener that throws does not stop the others. */
  emit(version: number): void;
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
    emit(version) {
      for (const l of [...listeners]) {
        try {
          l(version);
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
