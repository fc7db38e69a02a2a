/**
 * Decodes an ingest body into raw events: one watch event, a JSON array of them, or NDJSON.
 * Parsing is paced (a JSON array element or an NDJSON line at a time), so a large body never
 * holds the event loop in one call.
 */
import { noPace, type Pace } from "../pace.ts";
import type { Result } from "./errors.ts";
import { type BodyText, parseJsonSliced } from "./json-slices.ts";

/** Parses the body by content type; NDJSON lines are numbered as event indexes. */
export async function decodeEventsBody(
  body: BodyText,
  contentType: string | undefined,
  pace: Pace = noPace,
): Promise<Result<unknown[]>> {
  const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase();
  if (type === "application/x-ndjson" || type === "application/jsonl") {
    const events: unknown[] = [];
    let lineNo = 0;
    const line = (text: string): Result<unknown> | undefined => {
      lineNo++;
      const trimmed = text.trim();
      if (trimmed === "") return undefined;
      try {
        return { ok: true, value: JSON.parse(trimmed) };
      } catch (e) {
        const message = `malformed JSON on line ${lineNo}: ${reason(e)}`;
        return { ok: false, error: { index: events.length, message } };
      }
    };
    // A line may span pieces: its start is carried over to the next one.
    let carried = "";
    for (const piece of typeof body === "string" ? [body] : body) {
      for (let start = 0; ; ) {
        const nl = piece.indexOf("\n", start);
        if (nl < 0) {
          carried += piece.slice(start);
          break;
        }
        const parsed = line(carried + piece.slice(start, nl));
        carried = "";
        start = nl + 1;
        if (!parsed) continue;
        if (!parsed.ok) return parsed;
        events.push(parsed.value);
        await pace();
      }
    }
    const last = line(carried);
    if (last && !last.ok) return last;
    if (last) events.push(last.value);
    return { ok: true, value: events };
  }
  const parsed = await parseJsonSliced(body, pace);
  if (!parsed.ok) return parsed;
  return { ok: true, value: Array.isArray(parsed.value) ? parsed.value : [parsed.value] };
}

function reason(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
