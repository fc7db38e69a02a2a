/**
 * Request bodies read under a limit while they stream, for every HTTP path (ingest, REST-JSON,
 * the Worker's Poll forward): one helper, so no path buffers what it is going to refuse.
 */

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
