/** The request side of a bidi stream that a test feeds by hand: push requests, close when done. */
export interface RequestQueue<T> {
  /** The async iterable to hand to the client's bidi method. */
  requests: AsyncIterable<T>;
  push(req: T): void;
  /** Ends the request side; what was not yet taken is dropped (the stream is closing). */
  close(): void;
}

/** Creates an empty queue; its iterable waits for pushes until closed. */
export function requestQueue<T>(): RequestQueue<T> {
  const pending: T[] = [];
  let wake: (() => void) | undefined;
  let closed = false;
  async function* requests() {
    while (!closed) {
      const r = pending.shift();
      if (r !== undefined) yield r;
      else
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
    }
  }
  return {
    requests: requests(),
    push(req) {
      pending.push(req);
      wake?.();
    },
    close() {
      closed = true;
      wake?.();
    },
  };
}
