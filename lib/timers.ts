/** Timers: the Node ones in production, a manual clock in tests (injected, so no test sleeps). */
export interface Timers {
  now(): number;
  setTimeout(f: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}
