/**
 * Request bodies read under a limit while they stream, for every HTTP path (ingest, REST-JSON,
 * the Worker's Poll forward): one helper, so no path buffers what it is going to refuse.
 */
import type { Pace } from "../lib/pace.ts";

/**
 * The first `limit` bytes of a body, and whether there was more. Past `limit`, up to as many bytes
 * again are read and dropped, so a client a little over the limit finishes sending and reads its
 * error; beyond that the body is cancelled. Nothing past `limit` is ever kept.
 */
export async function readUpTo(req: Request, limit: number): Promise<{ bytes: Uint8Array; more: boolean }> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let seen = 0;
  const reader = req.body?.getReader();
  while (reader) {
    const { done, value } = await reader.read();
    if (done) break;
    seen += value.byteLength;
    const take = value.subarray(0, Math.max(0, limit - size));
    if (take.byteLength > 0) chunks.push(take);
    size += take.byteLength;
    if (seen > 2 * limit) {
      await reader.cancel();
      break;
    }
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return { bytes, more: seen > limit };
}

/** Characters decoded between two paces: a network chunk, or this much of one that arrived whole. */
const decodeStep = 64 * 1024;

/**
 * `readUpTo` for a body read as UTF-8 text: each chunk is decoded as it arrives, at most
 * `decodeStep` bytes per call with the pace awaited between, and the text is handed back in those
 * pieces, never joined. A 30 MB body joined, or copied into one buffer, is one long step of the
 * event loop; the ingest parsers read the pieces as they are (lib/ingest/json-slices.ts). Decoded
 * here rather than by `.text()`: workerd warns on that for a content type it does not know as
 * text (NDJSON).
 */
export async function readTextUpTo(
  req: Request,
  limit: number,
  pace: Pace,
): Promise<{ pieces: string[]; more: boolean }> {
  const pieces: string[] = [];
  const decoder = new TextDecoder();
  let seen = 0;
  const reader = req.body?.getReader();
  while (reader) {
    const { done, value } = await reader.read();
    if (done) break;
    const take = value.subarray(0, Math.max(0, limit - seen));
    seen += value.byteLength;
    for (let at = 0; at < take.byteLength; at += decodeStep) {
      pieces.push(decoder.decode(take.subarray(at, at + decodeStep), { stream: true }));
      await pace();
    }
    if (seen > 2 * limit) {
      await reader.cancel();
      break;
    }
  }
  if (seen > limit) return { pieces: [], more: true };
  pieces.push(decoder.decode());
  return { pieces, more: false };
}
