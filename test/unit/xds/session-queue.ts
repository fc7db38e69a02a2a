/**
 * Test helpers for a session's one path per input (lib/xds/sotw.ts, delta.ts): an answer at once
 * (an array) or through the session's queue (a promise), compared with each other.
 */

/** What the helpers need of a session: a push limited to some type URLs. */
interface Queued {
  onPush(typeUrls?: readonly string[]): unknown;
}

/**
 * `call`'s answer while another call is queued on `session` (a push of no type: it reads and
 * answers nothing), so the session answers through its queue, as when it cannot answer at once.
 */
export function throughQueue<T>(session: Queued, call: () => T[] | Promise<T[]>): Promise<T[]> {
  void session.onPush([]);
  const out = call();
  if (Array.isArray(out)) throw new Error("answered at once while a call was queued");
  return out;
}

/** The answer when it came at once (an array), else undefined (a promise: through the queue). */
export function atOnce<T>(out: T[] | Promise<T[]>): T[] | undefined {
  return Array.isArray(out) ? out : undefined;
}
