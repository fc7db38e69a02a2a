import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseJsonSliced } from "../../../lib/ingest/json-slices.ts";
import { noPace } from "../../../lib/pace.ts";

/** `text` cut at the given places (sorted, deduplicated, inside the text): the pieces a body is read in. */
function cut(text: string, at: readonly number[]): string[] {
  const points = [...new Set(at.map((a) => a % (text.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const p of points) {
    pieces.push(text.slice(from, p));
    from = p;
  }
  pieces.push(text.slice(from));
  return pieces;
}

/** JSON.parse's answer in the same Result shape. */
function reference(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

describe("parseJsonSliced", () => {
  it("equals JSON.parse on any JSON text, however spaced", async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), fc.constantFrom(undefined, 1, "\t", " \n "), async (v, space) => {
        const text = JSON.stringify(v, null, space);
        expect(await parseJsonSliced(text, noPace)).toEqual({ ok: true, value: JSON.parse(text) });
      }),
      { numRuns: 500 },
    );
  });

  it("refuses exactly what JSON.parse refuses", async () => {
    const nearJson = fc.oneof(
      fc.string(),
      fc
        .json()
        .chain((t) =>
          fc
            .tuple(fc.nat(t.length), fc.constantFrom("", ",", "]", "}", "[", "{", '"', ":", "x", " "))
            .map(([at, s]) => t.slice(0, at) + s + t.slice(at + 1)),
        ),
    );
    await fc.assert(
      fc.asyncProperty(nearJson, async (text) => {
        const got = await parseJsonSliced(text, noPace);
        const want = reference(text);
        expect(got.ok, text).toBe(want.ok);
        if (got.ok && want.ok) expect(got.value).toEqual(want.value);
        if (!got.ok) expect(got.error.message).toMatch(/^malformed JSON: /);
      }),
      { numRuns: 2000 },
    );
  });

  it("answers the same whatever pieces the text comes in (values, keys, numbers and escapes cut anywhere)", async () => {
    const text = fc.oneof(
      fc.jsonValue().map((v) => JSON.stringify(v, null, 1)),
      fc.json(),
      fc.string(),
    );
    await fc.assert(
      fc.asyncProperty(text, fc.array(fc.nat(), { maxLength: 8 }), async (t, at) => {
        const whole = await parseJsonSliced(t, noPace);
        const pieces = await parseJsonSliced(cut(t, at), noPace);
        expect(pieces.ok).toBe(whole.ok);
        if (pieces.ok && whole.ok) expect(pieces.value).toEqual(whole.value);
      }),
      { numRuns: 1000 },
    );
  });

  it("reads a value longer than many pieces once the window doubles", async () => {
    const big = { items: [{ name: "x".repeat(5000), list: Array.from({ length: 300 }, (_, i) => i) }] };
    const text = JSON.stringify(big);
    const pieces = Array.from({ length: Math.ceil(text.length / 7) }, (_, i) => text.slice(i * 7, i * 7 + 7));
    expect(await parseJsonSliced(pieces, noPace)).toEqual({ ok: true, value: big });
  });

  it("keeps __proto__ an own key and the last duplicate, as JSON.parse", async () => {
    const text = '{"__proto__": {"polluted": 1}, "a": 1, "a": [2, {"__proto__": 3}]}';
    const got = await parseJsonSliced(text, noPace);
    expect(got).toEqual({ ok: true, value: JSON.parse(text) });
    expect(got.ok && Object.getPrototypeOf(got.value)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("awaits the pace between the elements of the top two levels", async () => {
    let paced = 0;
    const body = JSON.stringify({ kind: "PodList", items: [{ a: [1, 2] }, { b: 2 }, { c: 3 }] });
    await parseJsonSliced(body, async () => void paced++);
    expect(paced).toBe(5); // 3 items, then the two members of the list
  });
});
