/**
 * One call at a time: a queue of async calls over one promise chain. Each call starts after the
 * previous one settled (fulfilled or rejected), and a failure is handed to its own caller only, so
 * one bad call never blocks or poisons the ones queued after it.
 */

/** Runs the functions it is given one after another, in the order they were given. */
export interface Serial {
  <T>(fn: () => Promise<T>): Promise<T>;
  /**
   * True when no call is queued or running: a caller may then do synchronous work on what the
   * calls guard without waiting its turn (nothing is in between to reorder).
   */
  readonly idle: boolean;
}

/** A new, empty queue. */
export function createSerial(): Serial {
  let tail: Promise<unknown> = Promise.resolve();
  let queued = 0;
  // `idle` is a plain property kept up to date, not a getter: a getter closure per queue gave each
  // queue its own hidden class, so reading `idle` (every stream, every push and ACK) was a
  // megamorphic lookup.
  const serial = Object.assign(
    <T>(fn: () => Promise<T>): Promise<T> => {
      queued++;
      serial.idle = false;
      const run = tail.then(fn, fn);
      tail = run.then(settled, settled);
      return run;
    },
    { idle: true },
  );
  const settled = () => {
    if (--queued === 0) serial.idle = true;
  };
  return serial;
}
