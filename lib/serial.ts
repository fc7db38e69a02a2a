/**
 * One call at a time: a queue of async calls over one promise chain. Each call starts after the
 * previous one settled (fulfilled or rejected), and a failure is handed to its own caller only, so
 * one bad call never blocks or poisons the ones queued after it.
 */

/** Runs the functions it is given one after another, in the order they were given. */
export type Serial = <T>(fn: () => Promise<T>) => Promise<T>;

/** A new, empty queue. */
export function createSerial(): Serial {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn, fn);
    tail = run.catch(() => undefined);
    return run;
  };
}
