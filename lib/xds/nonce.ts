/**
 * Response nonces of one stream: a random prefix per stream and a counter, so a nonce never repeats
 * within the stream (the counter) and one stream's nonce is never another's (64 random bits).
 * At most 32 characters, the longest string protobuf-es encodes without a TextEncoder call: a
 * nonce goes out in every response and comes back in every ACK.
 */

/** A nonce source for one stream; each call returns a nonce it never returned before. */
export function createNonces(): () => string {
  const random = crypto.getRandomValues(new Uint32Array(2));
  const prefix = `${hex8(random[0] as number)}${hex8(random[1] as number)}-`;
  let n = 0;
  return () => prefix + (n++).toString(36);
}

const hex8 = (v: number) => v.toString(16).padStart(8, "0");
