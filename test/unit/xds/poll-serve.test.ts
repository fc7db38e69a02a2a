/**
 * Long poll and Watch over a hub the test publishes to, with a manual timer: when an answer is
 * held, what releases it, what a Watch sends per push, and the stream budget. No real time passes.
 */
import { describe, expect, it } from "vitest";
import { deltaResourceBytes, envelopeBytes } from "../../../lib/xds/budget.ts";
import { createPollHub } from "../../../lib/xds/poll-hub.ts";
import { createPollServer, PollRefusedError } from "../../../lib/xds/poll-serve.ts";
import {
  CDS,
  EDS,
  manualTimeout,
  mutableSource,
  pollRequest,
  res,
  summary,
  track,
  until,
} from "./poll-support.ts";

function setup(maxStreams = 10) {
  const m = mutableSource([res(EDS, "a", "1"), res(EDS, "b", "1"), res(CDS, "c1", "1")]);
  const hub = createPollHub(m.source);
  const timer = manualTimeout();
  const shutdown = new AbortController();
  const server = createPollServer({
    source: m.source,
    hub,
    limits: { maxNamesPerRequest: 100, maxStreams },
    shutdown: shutdown.signal,
    timeout: timer.timeout,
  });
  const client = new AbortController();
  return { ...m, hub, timer, shutdown, server, client, call: { signal: client.signal } };
}

const current = { a: "1", b: "1" };
/** Until every listener is blocked waiting for a push (done computing). */
const waiting = (s: ReturnType<typeof setup>, n = s.hub.size) =>
  until(() => s.hub.size === n && s.hub.waiting === n, `${n} listener(s) waiting`);
const longPoll = (names: string[], held: Record<string, string>, waitMs = 30_000) =>
  pollRequest(EDS, { resourceNamesSubscribe: names, initialResourceVersions: held }, waitMs);

describe("long poll", () => {
  it("answers at once when there is something to send, holding nothing", async () => {
    const s = setup();
    const r = await s.server.poll(longPoll(["a", "b"], { a: "0", b: "1" }), s.call);
    expect(summary(r)).toEqual({ resources: { a: "1" }, removed: [] });
    expect(s.timer.timers).toHaveLength(0);
    expect(s.server.open).toBe(0);
    expect(s.hub.size).toBe(0);
  });

  it("without wait answers the empty delta at once", async () => {
    const s = setup();
    const r = await s.server.poll(
      pollRequest(EDS, { resourceNamesSubscribe: ["a"], initialResourceVersions: current }),
      s.call,
    );
    expect(summary(r)).toEqual({ resources: {}, removed: [] });
    expect(s.timer.timers).toHaveLength(0);
  });

  it("holds an empty answer until a push changes what it holds, then answers that change", async () => {
    const s = setup();
    const p = track(s.server.poll(longPoll(["a", "b"], current), s.call));
    await waiting(s);
    expect(p.done()).toBe(false);
    expect(s.server.open).toBe(1);
    expect(s.timer.timers.map((t) => t.ms)).toEqual([30_000]);

    s.hub.publish({ changes: s.put(res(CDS, "c1", "2")) }); // another type
    s.hub.publish({ changes: s.put(res(EDS, "zz", "1")) }); // a name it does not subscribe to
    await waiting(s);
    expect(p.done()).toBe(false);

    s.hub.publish({ changes: s.put(res(EDS, "b", "2")) });
    expect(summary(await p.value)).toEqual({ resources: { b: "2" }, removed: [] });
    expect(s.server.open).toBe(0);
    expect(s.timer.live).toBe(0);
    expect(s.hub.size).toBe(0);
  });

  it("answers removals of what it holds", async () => {
    const s = setup();
    const p = s.server.poll(longPoll(["a", "b"], current), s.call);
    await waiting(s);
    s.hub.publish({ changes: s.remove(EDS, "a") });
    expect(summary(await p)).toEqual({ resources: {}, removed: ["a"] });
  });

  it("answers the empty delta when the wait ends", async () => {
    const s = setup();
    const p = track(s.server.poll(longPoll(["a", "b"], current, 250), s.call));
    await waiting(s);
    expect(s.timer.timers.map((t) => t.ms)).toEqual([250]);
    s.timer.fire();
    expect(summary(await p.value)).toEqual({ resources: {}, removed: [] });
    expect(s.server.open).toBe(0);
  });

  it("a push that changed nothing it holds (changed back) keeps it waiting", async () => {
    const s = setup();
    const p = track(s.server.poll(longPoll(["a"], { a: "1" }), s.call));
    await waiting(s);
    s.hub.publish({}); // anything may have changed: it recomputes, finds nothing, waits on
    await waiting(s);
    expect(p.done()).toBe(false);
    s.timer.fire();
    expect(summary(await p.value)).toEqual({ resources: {}, removed: [] });
  });

  it("does not return early only because a subscribed name does not exist, but reports it", async () => {
    const s = setup();
    const p = track(s.server.poll(longPoll(["a", "nope"], { a: "1" }), s.call));
    await waiting(s);
    expect(p.done()).toBe(false);
    s.timer.fire();
    expect(summary(await p.value)).toEqual({ resources: {}, removed: ["nope"] });
  });

  it("returns when the name it waits for appears", async () => {
    const s = setup();
    const p = s.server.poll(longPoll(["a", "later"], { a: "1" }), s.call);
    await waiting(s);
    s.hub.publish({ changes: s.put(res(EDS, "later", "1")) });
    expect(summary(await p)).toEqual({ resources: { later: "1" }, removed: [] });
  });

  it("misses no push that lands while its first answer is computed", async () => {
    const s = setup();
    // The first read sees a@1 (nothing new); a@2 is published before the poll starts waiting.
    s.onNextRead(() => s.hub.publish({ changes: s.put(res(EDS, "a", "2")) }));
    const r = await s.server.poll(longPoll(["a"], { a: "1" }), s.call);
    expect(summary(r)).toEqual({ resources: { a: "2" }, removed: [] });
    expect(s.counts.get).toBe(2);
  });

  it("a Watch misses no push that lands while its first answer is computed", async () => {
    const s = setup();
    s.onNextRead(() => s.hub.publish({ changes: s.put(res(EDS, "a", "2")) }));
    const it = s.server.watch(pollRequest(EDS, { resourceNamesSubscribe: ["a"] }), s.call);
    expect(summary((await it.next()).value!)).toEqual({ resources: { a: "1" }, removed: [] });
    expect(summary((await it.next()).value!)).toEqual({ resources: { a: "2" }, removed: [] });
    await it.return(undefined);
  });

  it("ends with the empty answer when the client goes away or the server shuts down", async () => {
    for (const end of ["client", "shutdown"] as const) {
      const s = setup();
      const p = s.server.poll(longPoll(["a", "b"], current), s.call);
      await waiting(s);
      (end === "client" ? s.client : s.shutdown).abort();
      expect(summary(await p)).toEqual({ resources: {}, removed: [] });
      expect(s.server.open).toBe(0);
      expect(s.timer.live).toBe(0);
    }
  });

  it("waits no longer than the caller can (the client's own deadline)", async () => {
    const s = setup();
    const p = s.server.poll(longPoll(["a"], { a: "1" }, 60_000), { ...s.call, maxWaitMs: 900 });
    await waiting(s);
    expect(s.timer.timers.map((t) => t.ms)).toEqual([900]);
    s.timer.fire();
    await p;
  });

  it("refuses a bad request as invalid", async () => {
    const s = setup();
    await expect(s.server.poll(pollRequest("nope"), s.call)).rejects.toMatchObject({
      name: "PollRefusedError",
      reason: "invalid",
      message: expect.stringContaining("request.type_url nope is not served"),
    });
  });
});

describe("Watch", () => {
  async function open(
    s: ReturnType<typeof setup>,
    names: string[],
    held: Record<string, string> = {},
    typeUrl: string = EDS,
  ) {
    const it = s.server.watch(
      pollRequest(typeUrl, { resourceNamesSubscribe: names, initialResourceVersions: held }),
      s.call,
    );
    const first = await it.next();
    return { it, first: first.value };
  }

  it("sends the Poll answer first, then one delta per relevant push, relative to what it sent", async () => {
    const s = setup();
    const { it, first } = await open(s, ["a", "b", "later"], { a: "1" });
    expect(summary(first!)).toEqual({ resources: { b: "1" }, removed: ["later"] });
    expect(s.server.open).toBe(1);

    const next = track(it.next());
    s.hub.publish({ changes: s.put(res(CDS, "c1", "9")) });
    s.hub.publish({ changes: s.put(res(EDS, "other", "1")) });
    await waiting(s);
    expect(next.done()).toBe(false);

    s.hub.publish({ changes: s.put(res(EDS, "a", "2")) });
    expect(summary((await next.value).value!)).toEqual({ resources: { a: "2" }, removed: [] });

    s.hub.publish({ changes: s.remove(EDS, "b") });
    expect(summary((await it.next()).value!)).toEqual({ resources: {}, removed: ["b"] });

    s.hub.publish({ changes: s.put(res(EDS, "later", "1")) });
    expect(summary((await it.next()).value!)).toEqual({ resources: { later: "1" }, removed: [] });

    s.hub.publish({ changes: s.put(res(EDS, "b", "3")) });
    expect(summary((await it.next()).value!)).toEqual({ resources: { b: "3" }, removed: [] });

    s.hub.publish({ changes: s.remove(EDS, "later") });
    const last = (await it.next()).value!;
    expect(summary(last)).toEqual({ resources: {}, removed: ["later"] });
    expect(last.systemVersionInfo).toBe(
      (await s.server.poll(pollRequest(EDS, { resourceNamesSubscribe: ["a", "b"] }), s.call))
        .systemVersionInfo,
    );
    await it.return(undefined);
    expect(s.server.open).toBe(0);
    expect(s.hub.size).toBe(0);
  });

  it("coalesces pushes that arrive while the client is not reading into one delta", async () => {
    const s = setup();
    const { it } = await open(s, ["a", "b"]);
    s.hub.publish({ changes: s.put(res(EDS, "a", "2")) });
    s.hub.publish({ changes: s.put(res(EDS, "b", "2")) });
    s.hub.publish({ changes: s.put(res(EDS, "a", "3")) });
    expect(summary((await it.next()).value!)).toEqual({ resources: { a: "3", b: "2" }, removed: [] });
    const next = track(it.next());
    await waiting(s);
    expect(next.done()).toBe(false);
    s.client.abort();
    expect(await next.value).toEqual({ done: true, value: undefined });
  });

  it("a wildcard Watch gets every new resource of its type", async () => {
    const s = setup();
    const { it, first } = await open(s, [], {}, CDS);
    expect(summary(first!)).toEqual({ resources: { c1: "1" }, removed: [] });
    s.hub.publish({ changes: s.put(res(CDS, "c2", "1")) });
    expect(summary((await it.next()).value!)).toEqual({ resources: { c2: "1" }, removed: [] });
    await it.return(undefined);
  });

  it("ends when the server shuts down, releasing its place", async () => {
    const s = setup();
    const { it } = await open(s, ["a"]);
    const next = it.next();
    s.shutdown.abort();
    expect(await next).toEqual({ done: true, value: undefined });
    expect(s.server.open).toBe(0);
    expect(s.hub.size).toBe(0);
  });

  it("N Watches woken by one push read the store once between them", async () => {
    const s = setup();
    const watches = await Promise.all([1, 2, 3, 4, 5].map(() => open(s, ["a", "b"])));
    const before = { ...s.counts };
    s.hub.publish({ changes: s.put(res(EDS, "a", "2")) });
    for (const w of watches) expect(summary((await w.it.next()).value!).resources).toEqual({ a: "2" });
    expect(s.counts.get - before.get + s.counts.list - before.list).toBe(1);
    for (const w of watches) await w.it.return(undefined);
  });
});

describe("EDGEPILOT_MAX_STREAMS", () => {
  it("bounds open Watches and waiting polls together; answering polls and other calls are unaffected", async () => {
    const s = setup(2);
    const w1 = await (async () => {
      const it = s.server.watch(pollRequest(EDS, { resourceNamesSubscribe: ["a"] }), s.call);
      await it.next();
      return it;
    })();
    const held = s.server.poll(longPoll(["a", "b"], current), s.call);
    await until(() => s.server.open === 2 && s.hub.waiting === 1, "the long poll waiting");

    const refused = s.server.watch(pollRequest(EDS, { resourceNamesSubscribe: ["b"] }), s.call);
    const err = await refused.next().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PollRefusedError);
    expect(err).toMatchObject({
      reason: "exhausted",
      message: expect.stringMatching(
        /already holds 2 open Watch streams and waiting polls \(EDGEPILOT_MAX_STREAMS=2\)/,
      ),
    });
    await expect(s.server.poll(longPoll(["a", "b"], current), s.call)).rejects.toMatchObject({
      reason: "exhausted",
    });
    // A poll with something to say, or no wait, needs no place.
    expect(summary(await s.server.poll(longPoll(["a"], {}), s.call)).resources).toEqual({ a: "1" });

    // Those already open still work.
    s.hub.publish({ changes: s.put(res(EDS, "a", "2")) });
    expect(summary((await w1.next()).value!).resources).toEqual({ a: "2" });
    expect(summary(await held).resources).toEqual({ a: "2" });

    await w1.return(undefined);
    expect(s.server.open).toBe(0);
    const again = s.server.watch(pollRequest(EDS, { resourceNamesSubscribe: ["b"] }), s.call);
    expect(summary((await again.next()).value!).resources).toEqual({ b: "1" });
    await again.return(undefined);
  });
});

describe("byte budget (EDGEPILOT_MAX_RESPONSE_BYTES)", () => {
  /** Room for two resources per response. */
  const budget = envelopeBytes + 2 * deltaResourceBytes(res(EDS, "a", "1"));
  function small() {
    const m = mutableSource(["a", "b", "c", "d", "e"].map((n) => res(EDS, n, "1")));
    const hub = createPollHub(m.source);
    const server = createPollServer({
      source: m.source,
      hub,
      limits: { maxNamesPerRequest: 100, maxStreams: 10, maxResponseBytes: budget },
      timeout: manualTimeout().timeout,
    });
    return { ...m, hub, server, call: { signal: new AbortController().signal } };
  }
  const names = ["a", "b", "c", "d", "e", "later"];

  it("a Watch yields every piece of its first answer, then every piece of a push's delta", async () => {
    const s = small();
    const it = s.server.watch(pollRequest(EDS, { resourceNamesSubscribe: names }), s.call);
    const next = async () => summary((await it.next()).value!);
    expect(await next()).toEqual({ resources: { a: "1", b: "1" }, removed: [] });
    expect(await next()).toEqual({ resources: { c: "1", d: "1" }, removed: [] });
    expect(await next()).toEqual({ resources: { e: "1" }, removed: ["later"] });
    s.hub.publish({
      changes: [...s.put(res(EDS, "a", "2")), ...s.put(res(EDS, "b", "2")), ...s.put(res(EDS, "c", "2"))],
    });
    expect(await next()).toEqual({ resources: { a: "2", b: "2" }, removed: [] });
    expect(await next()).toEqual({ resources: { c: "2" }, removed: [] });
    await it.return(undefined);
  });

  it("a long poll answers the first piece at once; polling on with what it holds gets the rest", async () => {
    const s = small();
    const held: Record<string, string> = {};
    const got: ReturnType<typeof summary>[] = [];
    const poll = (waitMs?: number) =>
      s.server.poll(
        pollRequest(EDS, { resourceNamesSubscribe: names, initialResourceVersions: { ...held } }, waitMs),
        s.call,
      );
    for (let i = 0; i < 3; i++) {
      const r = await poll(30_000);
      got.push(summary(r));
      for (const x of r.resources) held[x.name] = x.version;
    }
    expect(got).toEqual([
      { resources: { a: "1", b: "1" }, removed: [] },
      { resources: { c: "1", d: "1" }, removed: [] },
      { resources: { e: "1" }, removed: ["later"] },
    ]);
    // Everything held: nothing new but the absent name, reported again (a stateless client may have lost it).
    expect(summary(await poll())).toEqual({ resources: {}, removed: ["later"] });
  });
});
