/**
 * Admission of new calls on XDS_PORT, as istiod's WaitForRequestLimit: every new ADS stream and
 * every unary or poll call takes a token from one per-instance bucket (PILOT_MAX_REQUESTS_PER_SECOND,
 * burst 1), waits at most a second for it, and is otherwise refused with ResourceExhausted so the
 * client backs off or connects to another instance. Streams already open are never touched.
 */
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { createTokenBucket } from "../lib/token-bucket.ts";

/** istiod's values: burst 1, a caller waits at most 1s for its turn. */
const burst = 1;
const maxWaitMs = 1000;

export interface AdmissionOptions {
  /** PILOT_MAX_REQUESTS_PER_SECOND. */
  ratePerSecond: number;
  now?: () => number;
  /** Called once per refusal (e.g. to count or log it); the message is already safe to log. */
  onRefused?: (message: string) => void;
}

/** One per-instance bucket: every transport on XDS_PORT admits its calls through the same one. */
export interface Admission {
  /** Resolves when the call may start; rejects with ResourceExhausted (refused) or Canceled (`signal` aborted while waiting). */
  admit(signal: AbortSignal): Promise<void>;
}

/** Creates the bucket admitting calls at `ratePerSecond`. */
export function createAdmission(options: AdmissionOptions): Admission {
  const bucket = createTokenBucket({ ratePerSecond: options.ratePerSecond, burst, maxWaitMs });
  const now = options.now ?? (() => performance.now());
  return {
    async admit(signal) {
      const decision = bucket.take(now());
      if (!decision.ok) {
        const message =
          `request rate limit exceeded: this instance admits ${options.ratePerSecond} new streams and ` +
          `calls per second (PILOT_MAX_REQUESTS_PER_SECOND); retry with backoff or connect to another instance`;
        options.onRefused?.(message);
        throw new ConnectError(message, Code.ResourceExhausted);
      }
      if (decision.waitMs > 0) await delay(decision.waitMs, signal);
    },
  };
}

/** A Connect interceptor that admits calls through `admission` (or a bucket of its own built from options). */
export function createAdmissionInterceptor(admission: AdmissionOptions | Admission): Interceptor {
  const bucket = "admit" in admission ? admission : createAdmission(admission);
  return (next) => async (req) => {
    await bucket.admit(req.signal);
    return next(req);
  };
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(ConnectError.from(signal.reason ?? "cancelled", Code.Canceled));
    const timer = setTimeout(done, ms);
    function done() {
      signal.removeEventListener("abort", aborted);
      resolve();
    }
    function aborted() {
      clearTimeout(timer);
      reject(ConnectError.from(signal.reason ?? "cancelled", Code.Canceled));
    }
    signal.addEventListener("abort", aborted, { once: true });
  });
}
