/**
 * A token bucket with reservations, as Go's golang.org/x/time/rate Limiter that istiod uses for
 * PILOT_MAX_REQUESTS_PER_SECOND: a caller takes a token now or reserves the next free one and
 * waits for it, unless that wait would exceed `maxWaitMs`; then it is refused and reserves
 * nothing. Pure: the clock is passed in, so tests never sleep.
 */

export interface TokenBucketOptions {
  /** Tokens added per second (> 0). */
  ratePerSecond: number;
  /** Tokens the bucket holds when full (≥ 1): how many callers pass at once after a quiet spell. */
  burst: number;
  /** The longest a caller may be asked to wait for its token; longer ▶ refused. */
  maxWaitMs: number;
}

/** The decision for one caller: go after `waitMs` (0: at once), or refused. */
export type TokenDecision = { ok: true; waitMs: number } | { ok: false; retryAfterMs: number };

export interface TokenBucket {
  /** Takes (or reserves) one token at time `now` (ms). Refusals take nothing. */
  take(now: number): TokenDecision;
}

/** Creates a full bucket. */
export function createTokenBucket(options: TokenBucketOptions): TokenBucket {
  const { ratePerSecond, burst, maxWaitMs } = options;
  if (!(ratePerSecond > 0) || !(burst >= 1) || !(maxWaitMs >= 0)) {
    throw new RangeError(`token bucket: rate ${ratePerSecond}/s, burst ${burst}, wait ${maxWaitMs}ms`);
  }
  const msPerToken = 1000 / ratePerSecond;
  // Tokens may go negative: each negative token is a reservation someone is waiting for.
  let tokens = burst;
  let last: number | undefined;
  return {
    take(now) {
      if (last !== undefined && now > last) tokens = Math.min(burst, tokens + (now - last) / msPerToken);
      if (last === undefined || now > last) last = now;
      const after = tokens - 1;
      const waitMs = after >= 0 ? 0 : -after * msPerToken;
      if (waitMs > maxWaitMs) return { ok: false, retryAfterMs: Math.ceil(waitMs - maxWaitMs) };
      tokens = after;
      return { ok: true, waitMs: Math.ceil(waitMs) };
    },
  };
}
