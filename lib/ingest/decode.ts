/**
 * Decodes an ingest body into raw events: one watch event, a JSON array of them, or NDJSON.
 * Parsing is paced (a JSON array element or an NDJSON line at a time), so a large body never
 * holds the event loop in one call.
 */
import { noPace, type Pace } from "../pace.ts";
import type { Result } from "./errors.ts";
import { parseJsonSliced } from "./json-slices.ts";

/** Parses the body by content type; NDJSON lines are numbered as event indexes. */
export async function decodeEventsBody(
  body: string,
  contentType: string | undefined,
  pace: Pace = noPace,
): Promise<Result<unknown[]>> {
  const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase();
  if (type === "application/x-ndjson" || type === "application/jsonl") {
    const events: unknown[] = [];
    for (let start = 0, lineNo = 1; start < body.length; lineNo++) {
      const nl = body.indexOf("\n", start);
      const end = nl < 0 ? body.length : nl;
      const line = body.slice(start, end).trim();
      start = end + 1;
      if (line === "") continue;
      try {
        events.push(JSON.parse(line));
      } catch (e) {
        return {
          ok: false,
          error: { index: events.length, message: `malformed JSON on line ${lineNo}: ${reason(e)}` },
        };
      }
      await pace();
    }
    return { ok: true, value: events };
  }
  const parsed = await parseJsonSliced(body, pace);
  if (!parsed.ok) return parsed;
  return { ok: true, value: Array.isArray(parsed.value) ? parsed.value : [parsed.value] };
}

function reason(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
