/**
 * readTextUpTo, how ingest reads a body: decoded as it streams, in bounded pieces with the pace
 * awaited between them (also when the whole body arrives as one chunk, as from app.request), UTF-8
 * characters split across chunks intact, and nothing kept of a body over the limit.
 */
import { describe, expect, it } from "vitest";
import { readTextUpTo } from "../../../functions/body.ts";

/** A POST whose body streams as the given chunks. */
function requestOf(chunks: Uint8Array[]): Request {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const c of chunks) controller.enqueue(c);
      controller.close();
    },
  });
  return new Request("http://x/v1/events", { method: "POST", body, duplex: "half" } as RequestInit);
}

/** `bytes` cut every `size` bytes. */
const chunked = (bytes: Uint8Array, size: number) =>
  Array.from({ length: Math.ceil(bytes.byteLength / size) }, (_, i) =>
    bytes.subarray(i * size, (i + 1) * size),
  );

describe("readTextUpTo", () => {
  const text = `${"ä€😀a".repeat(10_000)}\n`;
  const bytes = new TextEncoder().encode(text);

  for (const size of [3, 1000, bytes.byteLength]) {
    it(`decodes a body in ${size === bytes.byteLength ? "one chunk" : `${size}-byte chunks`} into bounded pieces, pacing between them`, async () => {
      let paces = 0;
      const { pieces, more } = await readTextUpTo(
        requestOf(chunked(bytes, size)),
        bytes.byteLength,
        async () => {
          paces++;
        },
      );
      expect(more).toBe(false);
      expect(pieces.join("")).toBe(text);
      expect(pieces.every((p) => p.length <= 64 * 1024)).toBe(true);
      expect(paces).toBeGreaterThanOrEqual(pieces.length - 1);
    });
  }

  it("keeps nothing of a body over the limit, and says so", async () => {
    const { pieces, more } = await readTextUpTo(
      requestOf(chunked(bytes, 4096)),
      bytes.byteLength - 1,
      async () => {},
    );
    expect(more).toBe(true);
    expect(pieces).toEqual([]);
  });
});
