/** Decodes an ingest body into raw events: one watch event, a JSON array of them, or NDJSON. */
import type { Result } from "./errors.ts";

/** Parses the body by content type; NDJSON lines are numbered as event indexes. */
export function decodeEventsBody(body: string, contentType: string | undefined): Result<unknown[]> {
  const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase();
  if (type === "application/x-ndjson" || type === "application/jsonl") {
    const events: unknown[] = [];
    const lines = body.split("\n");
    for (let i = 0; i < lines.length; i++) {
      const line = (lines[i] as string).trim();
      if (line === "") continue;
      try {
        events.push(JSON.parse(line));
      } catch (e) {
        return {
          ok: false,
          error: { index: events.length, message: `malformed JSON on line ${i + 1}: ${reason(e)}` },
        };
      }
    }
    return { ok: true, value: events };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (e) {
    return { ok: false, error: { message: `malformed JSON: ${reason(e)}` } };
  }
  return { ok: true, value: Array.isArray(parsed) ? parsed : [parsed] };
}

function reason(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
