import { describe, expect, it } from "vitest";
import { type WatchEnd, watchEnd } from "../../../lib/relay/watch-end.ts";

/** An Error as client-node's Watch throws for a non-200 answer: the status text, statusCode set. */
function statusError(statusCode: number, text: string): Error {
  return Object.assign(new Error(text), { statusCode });
}

describe("watchEnd", () => {
  const cases: { name: string; err: unknown; want: WatchEnd }[] = [
    { name: "null (the server closed the stream)", err: null, want: {} },
    { name: "undefined", err: undefined, want: {} },
    {
      name: "client-node's inactivity TimeoutError (a DOMException)",
      err: new DOMException("The operation was aborted due to timeout", "TimeoutError"),
      want: {},
    },
    { name: "410 Gone", err: statusError(410, "Gone"), want: { status: 410, error: "Gone" } },
    {
      name: "403",
      err: statusError(403, "Forbidden"),
      want: { status: 403, error: "Forbidden" },
    },
    {
      name: "a network error",
      err: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6443"), { code: "ECONNREFUSED" }),
      want: { error: "connect ECONNREFUSED 127.0.0.1:6443" },
    },
    {
      name: "our own abort (AbortError) is a failure: only a stale op ends that way",
      err: new DOMException("This operation was aborted", "AbortError"),
      want: { error: "This operation was aborted" },
    },
    { name: "a string", err: "boom", want: { error: "boom" } },
    {
      name: "a statusCode that is not a number",
      err: Object.assign(new Error("x"), { statusCode: "500" }),
      want: { error: "x" },
    },
  ];
  for (const c of cases) {
    it(`${c.name} ▶ ${JSON.stringify(c.want)}`, () => {
      expect(watchEnd(c.err)).toEqual(c.want);
    });
  }
});
