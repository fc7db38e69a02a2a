/** createAdmissionInterceptor (functions/admission.ts): istiod's wait-then-refuse, on a manual clock. */
import { Code, ConnectError, type UnaryRequest } from "@connectrpc/connect";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createAdmissionInterceptor } from "../../../functions/admission.ts";

afterEach(() => {
  vi.useRealTimers();
});

/** Calls the interceptor `n` times at once; returns when each call reached the handler, or its error. */
async function burst(n: number, rate: number, abort?: AbortController) {
  vi.useFakeTimers({ now: 0 });
  const refused: string[] = [];
  const handled: number[] = [];
  const interceptor = createAdmissionInterceptor({
    ratePerSecond: rate,
    now: () => Date.now(),
    onRefused: (m) => refused.push(m),
  });
  const next = interceptor(async () => {
    handled.push(Date.now());
    return {} as never;
  });
  const req = { signal: (abort ?? new AbortController()).signal } as UnaryRequest;
  const calls = Array.from({ length: n }, () =>
    next(req).then(
      () => "ok",
      (e: unknown) => ConnectError.from(e),
    ),
  );
  await vi.advanceTimersByTimeAsync(5000);
  return { results: await Promise.all(calls), handled, refused };
}

describe("admission interceptor (PILOT_MAX_REQUESTS_PER_SECOND)", () => {
  it("admits at the rate, each caller waiting its turn for at most 1s, and refuses the rest", async () => {
    const { results, handled, refused } = await burst(6, 4); // 4/s: turns at 0, 250, 500, 750, 1000 ms
    expect(handled).toEqual([0, 250, 500, 750, 1000]);
    const err = results[5] as ConnectError;
    expect(err.code).toBe(Code.ResourceExhausted);
    expect(err.rawMessage).toBe(
      "request rate limit exceeded: this instance admits 4 new streams and calls per second " +
        "(PILOT_MAX_REQUESTS_PER_SECOND); retry with backoff or connect to another instance",
    );
    expect(refused).toEqual([err.rawMessage]);
  });

  it("a caller cancelled while it waits never reaches the handler", async () => {
    const abort = new AbortController();
    vi.useFakeTimers({ now: 0 });
    const interceptor = createAdmissionInterceptor({ ratePerSecond: 1, now: () => Date.now() });
    let handled = 0;
    const next = interceptor(async () => {
      handled++;
      return {} as never;
    });
    await next({ signal: new AbortController().signal } as UnaryRequest);
    const waiting = next({ signal: abort.signal } as UnaryRequest).catch((e: unknown) =>
      ConnectError.from(e),
    );
    await vi.advanceTimersByTimeAsync(100);
    abort.abort();
    expect(((await waiting) as ConnectError).code).toBe(Code.Canceled);
    await vi.advanceTimersByTimeAsync(2000);
    expect(handled).toBe(1);
  });
});
