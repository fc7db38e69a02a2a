/**
 * JSON.parse in slices. One JSON.parse of a large body holds the event loop for one long step,
 * so the top two levels of containers (an array of events; a List object and its `items`) are
 * walked here and each value below them is parsed on its own, with the pace awaited in between.
 * The result equals JSON.parse's (own `__proto__` keys included, last duplicate key wins).
 */
import type { Pace } from "../pace.ts";
import type { Result } from "./errors.ts";

/** Containers at depth 0 and 1 are split; values at depth 2 and below are parsed whole. */
const splitDepth = 2;

/**
 * A body's text: one string, or the pieces it was decoded in, read in order and never joined (a
 * join of a large body is itself one long step of the event loop).
 */
export type BodyText = string | readonly string[];

class Malformed extends Error {}

/** Parses `body` as JSON, awaiting `pace` between pieces; errors say where the text is malformed. */
export async function parseJsonSliced(body: BodyText, pace: Pace): Promise<Result<unknown>> {
  const pieces = typeof body === "string" ? [body] : body;
  let next = 0;
  /** The window of the text being read: what is left of the pieces taken so far. */
  let text = "";
  /** Where `text` starts in the whole body (for error positions). */
  let base = 0;
  let i = 0;
  /**
   * Drops the window before `i` and appends pieces until at least `want` characters came (a value
   * longer than the window doubles it, so a long value is scanned a bounded number of times);
   * false at the end of the body.
   */
  const more = (want: number): boolean => {
    if (next >= pieces.length) return false;
    let added = 0;
    let window = text.slice(i);
    while (next < pieces.length && added < want) {
      const piece = pieces[next++] as string;
      window += piece;
      added += piece.length;
    }
    base += i;
    text = window;
    i = 0;
    return true;
  };
  const fail = (what: string): never => {
    throw new Malformed(`${what} at character ${base + i}`);
  };
  const ws = () => {
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 9 || c === 10 || c === 13) i++;
      else if (i < text.length || !more(1)) return;
    }
  };
  const expect = (char: string) => {
    ws();
    if (text[i] !== char) fail(`expected ${JSON.stringify(char)}`);
    i++;
  };
  const whole = (): unknown => {
    let end = skipValue(text, i);
    while (end < 0) end = more(Math.max(text.length - i, 1)) ? skipValue(text, i) : text.length;
    try {
      const v: unknown = JSON.parse(text.slice(i, end));
      i = end;
      return v;
    } catch (e) {
      return fail(e instanceof Error ? e.message : String(e));
    }
  };
  const close = <T>(container: T): T => {
    i++;
    return container;
  };
  const value = async (depth: number): Promise<unknown> => {
    ws();
    const c = text[i];
    if (depth >= splitDepth || (c !== "[" && c !== "{")) return whole();
    i++;
    ws();
    if (c === "[") {
      const out: unknown[] = [];
      if (text[i] === "]") return close(out);
      for (;;) {
        out.push(await value(depth + 1));
        await pace();
        ws();
        if (text[i] === "]") return close(out);
        expect(",");
      }
    }
    const out: Record<string, unknown> = {};
    if (text[i] === "}") return close(out);
    for (;;) {
      ws();
      if (text[i] !== '"') fail("expected a string key");
      const key = whole() as string;
      expect(":");
      const v = await value(depth + 1);
      Object.defineProperty(out, key, { value: v, writable: true, enumerable: true, configurable: true });
      await pace();
      ws();
      if (text[i] === "}") return close(out);
      expect(",");
    }
  };
  try {
    const parsed = await value(0);
    ws();
    if (i < text.length) fail("unexpected text after the JSON value");
    return { ok: true, value: parsed };
  } catch (e) {
    if (!(e instanceof Malformed)) throw e;
    return { ok: false, error: { message: `malformed JSON: ${e.message}` } };
  }
}

/**
 * The index just past the JSON value starting at `i` (brackets and strings balanced; JSON.parse
 * checks the rest), or -1 when the text ends first: the value may go on in the next piece.
 */
function skipValue(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 34) return skipString(text, i);
  if (c === 91 || c === 123) {
    let depth = 0;
    while (i < text.length) {
      const d = text.charCodeAt(i);
      if (d === 34) {
        i = skipString(text, i);
        if (i < 0) return -1;
        continue;
      }
      if (d === 91 || d === 123) depth++;
      else if (d === 93 || d === 125) {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
    return -1;
  }
  while (i < text.length) {
    const d = text.charCodeAt(i);
    if (d === 44 || d === 93 || d === 125 || d === 32 || d === 9 || d === 10 || d === 13) return i;
    i++;
  }
  return -1;
}

function skipString(text: string, i: number): number {
  for (i++; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 92) i++;
    else if (c === 34) return i + 1;
  }
  return -1;
}
