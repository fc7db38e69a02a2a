/** runAdsStream and pumpAdsStream (lib/xds/ads-stream.ts): ordering, coalescing, bounded reading, the sink. */
import { describe, expect, it } from "vitest";
import { createPushSignal } from "../../../lib/push/signal.ts";
import type { ResourceChange } from "../../../lib/resources/changes.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import {
  maxPendingChanges,
  pumpAdsStream,
  runAdsStream,
  type StreamSession,
} from "../../../lib/xds/ads-stream.ts";

const settle = async (turns = 5) => {
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
};

/** A session that answers "req:<n>" per request and "push" per push turn, recording the order. */
function echoSession(): StreamSession<number, string> & { handled: string[] } {
  const handled: string[] = [];
  return {
    handled,
    async onRequest(req) {
      handled.push(`req:${req}`);
      return [`req:${req}`];
    },
    async onPush() {
      handled.push("push");
      return ["push"];
    },
  };
}

/** A request side the test feeds by hand; counts how many requests the stream has pulled. */
function feed() {
  const queue: number[] = [];
  let wake: (() => void) | undefined;
  let pulled = 0;
  let ended = false;
  async function* requests() {
    for (;;) {
      while (queue.length === 0 && !ended)
        await new Promise<void>((r) => {
          wake = r;
        });
      if (queue.length === 0) return;
      pulled++;
      yield queue.shift() as number;
    }
  }
  return {
    requests: requests(),
    send: (...n: number[]) => {
      queue.push(...n);
      wake?.();
    },
    end: () => {
      ended = true;
      wake?.();
    },
    pulled: () => pulled,
  };
}

describe("runAdsStream", () => {
  it("handles requests and pushes one at a time in arrival order; pushes pending together coalesce", async () => {
    const f = feed();
    const pushes = createPushSignal();
    const session = echoSession();
    const abort = new AbortController();
    const out = runAdsStream(f.requests, session, pushes, abort.signal);
    const first = out.next();
    f.send(1);
    expect((await first).value).toBe("req:1");
    // While the stream is not pulled: a push, a request, another push (pending with the first).
    pushes.emit({ version: 1 });
    await settle();
    f.send(2);
    await settle();
    pushes.emit({ version: 2 });
    const got: string[] = [];
    for (let i = 0; i < 2; i++) got.push((await out.next()).value as string);
    expect(got).toEqual(["push", "req:2"]);
    pushes.emit({ version: 3 });
    pushes.emit({ version: 4 });
    expect((await out.next()).value).toBe("push");
    f.end();
    expect((await out.next()).done).toBe(true);
    expect(session.handled).toEqual(["req:1", "push", "req:2", "push"]);
  });

  it("reads no further ahead than one request while its responses are not taken (a non-reading client)", async () => {
    const f = feed();
    const session = echoSession();
    const abort = new AbortController();
    const out = runAdsStream(f.requests, session, createPushSignal(), abort.signal);
    // The client sends 10,000 requests and never reads a response.
    f.send(...Array.from({ length: 10_000 }, (_, i) => i));
    const first = out.next();
    await settle(20);
    expect((await first).value).toBe("req:0");
    await settle(20);
    // One handled (its response waits for the transport), one read ahead; the rest stay with
    // the transport, where HTTP/2 flow control holds the client back.
    expect(f.pulled()).toBeLessThanOrEqual(2);
    for (let i = 1; i <= 100; i++) expect((await out.next()).value).toBe(`req:${i}`);
    await settle(20);
    expect(f.pulled()).toBeLessThanOrEqual(102);
    abort.abort();
    expect((await out.next()).done).toBe(true);
  });

  it("ends with a check's error on the request it refuses, and stops reading", async () => {
    const f = feed();
    const out = runAdsStream(
      f.requests,
      echoSession(),
      createPushSignal(),
      new AbortController().signal,
      (n) => (n === 2 ? new Error("refused 2") : undefined),
    );
    f.send(1, 2, 3, 4, 5);
    expect((await out.next()).value).toBe("req:1");
    await expect(out.next()).rejects.toThrow("refused 2");
    await settle();
    expect(f.pulled()).toBeLessThanOrEqual(3);
  });

  it("hands the session what coalesced pushes changed, or nothing once one of them did not say", async () => {
    const f = feed();
    const pushes = createPushSignal();
    const seen: (string[] | undefined)[] = [];
    const session: StreamSession<number, string> = {
      async onRequest(req) {
        return [`req:${req}`];
      },
      async onPush({ changes }) {
        seen.push(changes?.map((c) => c.name));
        return ["push"];
      },
    };
    const out = runAdsStream(f.requests, session, pushes, new AbortController().signal);
    const change = (name: string): ResourceChange[] => [{ typeUrl: TypeUrl.endpoint, name, version: "v" }];
    const many = (n: number): ResourceChange[] =>
      Array.from({ length: n }, (_, i) => ({ typeUrl: TypeUrl.endpoint, name: `m${i}`, version: "v" }));
    const manyNames = (n: number) => many(n).map((c) => c.name);
    const first = out.next();
    f.send(1);
    await first;
    // Table: the pushes pending together ▶ what the session is handed.
    const cases: { emits: (ResourceChange[] | undefined)[]; handed: string[] | undefined }[] = [
      { emits: [change("a")], handed: ["a"] },
      { emits: [change("a"), change("b")], handed: ["a", "b"] },
      { emits: [change("a"), undefined, change("b")], handed: undefined },
      { emits: [undefined], handed: undefined },
      { emits: [change("c")], handed: ["c"] },
      // A stream that fell behind keeps at most maxPendingChanges; past it, it re-reads everything.
      { emits: [many(maxPendingChanges)], handed: manyNames(maxPendingChanges) },
      { emits: [many(maxPendingChanges), change("d")], handed: undefined },
      { emits: [change("e")], handed: ["e"] },
    ];
    for (const c of cases) {
      for (const e of c.emits) pushes.emit({ version: 1, changes: e });
      expect((await out.next()).value).toBe("push");
    }
    expect(seen).toEqual(cases.map((c) => c.handed));
    f.end();
    expect((await out.next()).done).toBe(true);
  });

  it("pumpAdsStream hands each response to the sink and takes the next input only once the sink's promise resolved", async () => {
    const f = feed();
    const pushes = createPushSignal();
    const session = echoSession();
    const got: string[] = [];
    let release: (() => void) | undefined;
    const done = pumpAdsStream(f.requests, session, pushes, new AbortController().signal, (r) => {
      got.push(r);
      // The first response fills the transport's buffer: the stream waits until it drained.
      if (got.length === 1)
        return new Promise<void>((resolve) => {
          release = resolve;
        });
    });
    f.send(1, 2);
    await settle();
    pushes.emit({ version: 1 });
    await settle();
    expect(got).toEqual(["req:1"]);
    expect(session.handled).toEqual(["req:1"]);
    release?.();
    await settle();
    // Written at once (no promise): the request read meanwhile, then the push that waited.
    expect(got).toEqual(["req:1", "req:2", "push"]);
    f.end();
    await expect(done).resolves.toBeUndefined();
  });

  it("pumpAdsStream hands a push to the session in the feed's own call only while idle; an answer at once is written there; a response that must drain holds the next input", async () => {
    const f = feed();
    const pushes = createPushSignal();
    const session = echoSession();
    const now: (readonly ResourceChange[] | undefined)[] = [];
    let later = false;
    const withNow: StreamSession<number, string> = {
      ...session,
      onPush(changed) {
        now.push(changed.changes);
        // Through the session's queue (a promise): "push"; else answered at once.
        if (later) return session.onPush(changed);
        session.handled.push(`now${now.length}`);
        return [`now${now.length}-a`, `now${now.length}-b`];
      },
    };
    const got: string[] = [];
    let release: (() => void) | undefined;
    const done = pumpAdsStream(f.requests, withNow, pushes, new AbortController().signal, (r) => {
      got.push(r);
      if (r === "now1-a")
        return new Promise<void>((resolve) => {
          release = resolve;
        });
    });
    const change: ResourceChange[] = [{ typeUrl: TypeUrl.endpoint, name: "a", version: "v1" }];
    f.send(1);
    await settle();
    // Idle: answered within emit, no turn of the loop; the first write must drain.
    pushes.emit({ version: 1, changes: change });
    expect(got).toEqual(["req:1", "now1-a"]);
    expect(now).toEqual([change]);
    // Not idle while it drains: the next push and request wait, in order, behind it.
    pushes.emit({ version: 2, changes: change });
    f.send(2);
    await settle();
    expect(got).toEqual(["req:1", "now1-a"]);
    expect(now).toEqual([change]);
    release?.();
    await settle();
    expect(got).toEqual(["req:1", "now1-a", "now1-b", "now2-a", "now2-b", "req:2"]);
    expect(now).toEqual([change, change]);
    // A promise: handed over within emit all the same, written once it resolved, in the loop's turn.
    later = true;
    pushes.emit({ version: 3, changes: change });
    expect(now).toEqual([change, change, change]);
    await settle();
    expect(got.at(-1)).toBe("push");
    expect(session.handled).toEqual(["req:1", "now1", "now2", "req:2", "push"]);
    f.end();
    await expect(done).resolves.toBeUndefined();
  });

  it("pumpAdsStream hands a push that did not say what changed to an idle session at once too", async () => {
    const f = feed();
    const pushes = createPushSignal();
    const session = echoSession();
    const got: string[] = [];
    const done = pumpAdsStream(f.requests, session, pushes, new AbortController().signal, (r) => {
      got.push(r);
    });
    f.send(1);
    await settle();
    pushes.emit({ version: 1 });
    // Handed over within emit (the session was called), written once its promise resolved.
    expect(session.handled).toEqual(["req:1", "push"]);
    await settle();
    expect(got).toEqual(["req:1", "push"]);
    f.end();
    await expect(done).resolves.toBeUndefined();
  });

  it("pumpAdsStream hands a request to the session in the reader's turn while idle, after its check, once; a refused one ends the stream", async () => {
    const f = feed();
    const pushes = createPushSignal();
    const session = echoSession();
    const checked: number[] = [];
    const withNow: StreamSession<number, string> = {
      ...session,
      // Odd: answered at once; even: through the session's queue (a promise).
      onRequest(req) {
        if (req % 2 === 0) return session.onRequest(req);
        session.handled.push(`now:${req}`);
        return [];
      },
    };
    const got: string[] = [];
    const check = (req: number) => {
      checked.push(req);
      return req === 9 ? new Error("refused 9") : undefined;
    };
    const done = pumpAdsStream(
      f.requests,
      withNow,
      pushes,
      new AbortController().signal,
      (r) => {
        got.push(r);
      },
      check,
    );
    await settle();
    f.send(1);
    await settle();
    f.send(2, 3);
    await settle();
    // Each checked once and handled once, in order; 3 waited for 2's promise.
    expect(session.handled).toEqual(["now:1", "req:2", "now:3"]);
    expect(checked).toEqual([1, 2, 3]);
    expect(got).toEqual(["req:2"]);
    f.send(9, 5);
    await expect(done).rejects.toThrow("refused 9");
    expect(checked).toEqual([1, 2, 3, 9]);
  });
});
