/** validateEvents for large batches: the same checks, event by event, with the pace awaited between events. */
import type { Pace } from "../pace.ts";
import type { Result } from "./errors.ts";
import type { WatchEvent } from "./events.ts";
import { validateEvent } from "./validate.ts";

/**
 * Screens every event, yielding when the slice is used up: the first malformed event fails the
 * batch with its index; objects refused by their kind's rules come back as REJECTED events.
 */
export async function validateEventsPaced(
  raw: readonly unknown[],
  pace: Pace,
): Promise<Result<WatchEvent[]>> {
  const events: WatchEvent[] = [];
  for (let index = 0; index < raw.length; index++) {
    const r = validateEvent(raw[index]);
    if (!r.ok) return { ok: false, error: { index, ...r.error } };
    events.push(r.value);
    await pace();
  }
  return { ok: true, value: events };
}
