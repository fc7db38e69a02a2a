import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseJsonSliced } from "../../../lib/ingest/json-slices.ts";
import { noPace } from "../../../lib/pace.ts";

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
