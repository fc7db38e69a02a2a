/** Waiting, through real calls, until a proxyless gRPC client behaves as a change says it should. */
import { expect } from "vitest";
import type { RunningControlPlane } from "./runtime.ts";
import type { WhoClient } from "./xds-client.ts";

export interface Until {
  /** Which answers count. */
  accept: (answer: string) => boolean;
  /** What is awaited, for the error. */
  what: string;
  /** How many accepted answers in a row make it converged (default 6). */
  settle?: number;
  /** Request headers of every call. */
  headers?: Record<string, string>;
}

/**
 * Calls `client` until `accept` holds for `settle` answers in a row (a failed call answers
 * `error:<code>`), for at most 15 s; returns the ms from `since` to the first of them. Throws with
 * the last answer and the control plane's output when it never converges.
 */
export async function until(
  cp: Pick<RunningControlPlane, "output">,
  client: WhoClient,
  since: number,
  { accept, what, settle = 6, headers }: Until,
): Promise<number> {
  let firstGood: number | undefined;
  let streak = 0;
  let last = "";
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const answer = await client.who(1000, headers).catch((e: { code?: number }) => `error:${e.code}`);
    last = answer;
    if (accept(answer)) {
      firstGood ??= Date.now();
      if (++streak >= settle) return firstGood - since;
    } else {
      firstGood = undefined;
      streak = 0;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  throw new Error(`client never converged on ${what}; last answer ${last}\n${cp.output()}`);
}

/** POSTs watch events to the control plane's ingest, expecting 200; returns when it was posted. */
export async function post(cp: Pick<RunningControlPlane, "post">, ...events: unknown[]): Promise<number> {
  const at = Date.now();
  const res = await cp.post(events);
  expect(res.status, await res.clone().text()).toBe(200);
  return at;
}
