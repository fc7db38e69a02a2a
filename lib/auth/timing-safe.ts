/** Constant-time comparison of secrets (bearer tokens): the one helper every token check uses. */

/**
 * True when `a` and `b` are equal. Compares every character of the longer string without an
 * early exit, so the response time says nothing about how much of a guessed token was right.
 */
export function timingSafeEqual(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++)
    diff |= (a.charCodeAt(i) || 0) ^ (b.charCodeAt(i) || 0);
  return diff === 0;
}

/** The token of an `Authorization: Bearer <token>` header value; undefined for any other scheme. */
export function bearerToken(header: string | null | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return m?.[1];
}
