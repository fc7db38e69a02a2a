import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import type { UpstreamRequest } from "../../../lib/agent/machine.ts";
import {
  afterWatchEnded,
  initialTransport,
  retryWatch,
  type TransportOptions,
  type TransportState,
  type UpstreamProtocol,
  type WatchEnd,
  watchDue,
} from "../../../lib/agent/transport.ts";
import {
  type DeltaDiscoveryRequest,
  DeltaDiscoveryRequestSchema,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { maxPollNackMessageChars, readPollRequest } from "../../../lib/xds/poll-request.ts";
import { driveMachine, logs, node, sends } from "./machine-driver.ts";

const CDS = TypeUrl.cluster;
const EDS = TypeUrl.endpoint;
const o: TransportOptions = { watchMinLifeMs: 30_000, cutsBeforePoll: 3, watchRetryMs: 300_000 };
const watching = (over: Partial<TransportState> = {}): TransportState => ({
  ...initialTransport("watch"),
  ...over,
});
const end = (over: Partial<WatchEnd> = {}): WatchEnd => ({
  code: "unavailable",
  message: "cut",
  connected: true,
  livedMs: 1000,
  now: 50_000,
  ...over,
});

describe("the Watch ─▶ Poll fallback rule", () => {
  it.each([
    { what: "a first quick cut", t: watching(), e: end(), current: "watch", cuts: 1 },
    { what: "the third quick cut in a row", t: watching({ cuts: 2 }), e: end(), current: "poll", cuts: 0 },
    {
      what: "an end without status (ok) counts",
      t: watching({ cuts: 2 }),
      e: end({ code: "ok" }),
      current: "poll",
      cuts: 0,
    },
    {
      what: "a stream that lived long resets",
      t: watching({ cuts: 2 }),
      e: end({ livedMs: 30_000 }),
      current: "watch",
      cuts: 0,
    },
    {
      what: "unreachable is no cut",
      t: watching({ cuts: 2 }),
      e: end({ connected: false }),
      current: "watch",
      cuts: 2,
    },
    {
      what: "no first answer in time is a cut, headers or not (a buffering proxy)",
      t: watching({ cuts: 2 }),
      e: end({ code: "deadline_exceeded", connected: false }),
      current: "poll",
      cuts: 0,
    },
    {
      what: "a refused token is no cut",
      t: watching({ cuts: 2 }),
      e: end({ code: "unauthenticated" }),
      current: "watch",
      cuts: 2,
    },
    {
      what: "Watch refused as unsupported",
      t: watching(),
      e: end({ code: "unimplemented", connected: false }),
      current: "poll",
      cuts: 0,
    },
    {
      what: "ADS is left alone",
      t: initialTransport("ads"),
      e: end({ code: "unimplemented" }),
      current: "ads",
      cuts: 0,
    },
    {
      what: "configured Poll is left alone",
      t: initialTransport("poll"),
      e: end(),
      current: "poll",
      cuts: 0,
    },
  ] as const)("$what", ({ t, e, current, cuts }) => {
    const r = afterWatchEnded(t, e, o);
    expect(r.next.current).toBe(current);
    expect(r.next.cuts).toBe(cuts);
    const switched = t.current === "watch" && current === "poll";
    expect(r.line !== undefined).toBe(switched);
    if (switched) expect(r.next.retryWatchAt).toBe(e.now + o.watchRetryMs);
  });

  it("retries Watch after watchRetryMs, only after a fallback; one more cut goes back", () => {
    const fell = afterWatchEnded(watching(), end({ code: "unimplemented" }), o).next;
    expect(watchDue(fell, 50_000 + o.watchRetryMs - 1)).toBe(false);
    expect(watchDue(fell, 50_000 + o.watchRetryMs)).toBe(true);
    expect(watchDue(initialTransport("poll"), Number.MAX_SAFE_INTEGER)).toBe(false);
    const again = retryWatch(o).next;
    expect(again).toEqual({ current: "watch", cuts: 2, retryWatchAt: 0 });
    expect(afterWatchEnded(again, end(), o).next.current).toBe("poll");
  });
});

/** The machine over a Connect transport, with a clock; its responses carry no nonce (""). */
const machine = (protocol: UpstreamProtocol) =>
  driveMachine({ protocol, context: { upstream: "https://edge.example", tokenSource: "", transport: o } });

describe("agent machine over Connect Watch/Poll", () => {
  it("opens a Watch session with one whole call per type, each with the node and what the cache holds", () => {
    const m = machine("watch");
    const opened = m.ask(CDS, [], true);
    expect(opened[0]).toEqual({ do: "open", op: 1, transport: "watch" });
    expect(logs(opened)).toEqual(["agent: upstream https://edge.example: connecting (Connect Watch)"]);
    expect(sends(opened)).toEqual([
      { typeUrl: CDS, node, subscribe: ["*"], initialVersions: {}, responseNonce: "" },
    ]);
    m.respond(CDS, "", [["a", "v1"]]);
    // More names of a type restart its call with the whole subscription, node and cache.
    m.ask(EDS, ["e1"]);
    expect(sends(m.ask(EDS, ["e2"]))).toEqual([
      { typeUrl: EDS, node, subscribe: ["e1", "e2"], initialVersions: {}, responseNonce: "" },
    ]);
    expect(m.ask(EDS, ["e1"])).toEqual([]);
    // Reopened: every type again, holding what the cache holds.
    m.end();
    expect(sends(m.timer()).map((r) => [r.typeUrl, r.subscribe, r.initialVersions, r.node?.id])).toEqual([
      [CDS, ["*"], { a: "v1" }, node.id],
      [EDS, ["e1", "e2"], {}, node.id],
    ]);
  });

  it("ACKs nothing over Watch", () => {
    const m = machine("watch");
    m.ask(CDS, [], true);
    const actions = m.respond(CDS, "", [["a", "v1"]]);
    expect(actions.filter((a) => a.do === "ackAt" || a.do === "send")).toEqual([]);
  });

  it.each([
    "watch",
    "poll",
  ] as const)("%s: a local NACK restarts that type's call carrying it (prefixed by the node id), once", (protocol) => {
    const m = machine(protocol);
    m.ask(CDS, [], true);
    m.ask(EDS, ["e1"]);
    m.respond(CDS, "", [["a", "v1"]]);
    const nack = m.send({ type: "nack", nodeId: "n1", typeUrl: CDS, code: 3, message: "bad" });
    expect(sends(nack)).toEqual([
      {
        typeUrl: CDS,
        node,
        subscribe: ["*"],
        initialVersions: { a: "v1" },
        responseNonce: "",
        error: { code: 3, message: "n1: bad" },
      },
    ]);
    expect(nack.every((a) => a.do !== "open" && a.do !== "close")).toBe(true);
    expect(logs(nack)).toEqual([
      expect.stringMatching(/^agent: forwarded upstream: NACK of .*Cluster.* from local proxy "n1": "bad"$/),
    ]);
    // Once: the calls after it (the next long poll, more names, a reconnect) carry no error.
    const after = [...m.respond(CDS, "", []), ...m.ask(CDS, ["x"], true), ...m.end(), ...m.timer()];
    expect(sends(after).length).toBeGreaterThan(0);
    expect(sends(after).filter((r) => r.error)).toEqual([]);
  });

  it("a NACK message is cut to what a PollRequest takes; without a connected upstream it is only logged", () => {
    const m = machine("watch");
    m.ask(CDS, [], true);
    const long = m.send({ type: "nack", nodeId: "n1", typeUrl: CDS, code: 13, message: "z".repeat(5000) });
    const message = sends(long)[0]?.error?.message ?? "";
    expect(message.length).toBe(maxPollNackMessageChars);
    expect(message).toMatch(/^n1: z+…\(cut\)$/);
    expect(readPollRequest({ request: { ...deltaOf(sends(long)[0]) } }, 10).ok).toBe(true);
    m.end();
    const waiting = m.send({ type: "nack", nodeId: "n1", typeUrl: CDS, code: 3, message: "bad" });
    expect(sends(waiting)).toEqual([]);
    expect(logs(waiting)[0]).toMatch(/not forwarded \(the upstream is not connected\)/);
  });

  it("polls again after each answer, holding what it brought", () => {
    const m = machine("poll");
    m.ask(CDS, [], true);
    const next = m.respond(CDS, "", [["a", "v1"]]);
    expect(sends(next)).toEqual([
      { typeUrl: CDS, node, subscribe: ["*"], initialVersions: { a: "v1" }, responseNonce: "" },
    ]);
    // An empty long poll: the same poll again.
    expect(sends(m.respond(CDS, "", []))[0]?.initialVersions).toEqual({ a: "v1" });
  });

  it("falls back to Poll after three quick cuts, and tries Watch again 5 min later", () => {
    const m = machine("watch");
    m.ask(CDS, [], true);
    const said: string[] = [];
    for (let i = 0; i < 3; i++) {
      m.connected();
      m.respond(CDS, "", [["a", "v1"]]);
      m.tick(1000);
      said.push(...logs(m.end("ok")));
      if (i < 2) expect(sends(m.timer())[0]?.initialVersions).toEqual({ a: "v1" });
    }
    expect(said.at(-1)).toMatch(
      /Watch cut 3 time\(s\) in a row within 30s of connecting \(last: ok\); falling back/,
    );
    const polling = m.timer();
    expect(polling[0]).toEqual({ do: "open", op: m.state.op, transport: "poll" });
    expect(sends(polling)[0]?.initialVersions).toEqual({ a: "v1" });
    m.tick(o.watchRetryMs);
    const retried = m.respond(CDS, "", []);
    expect(logs(retried)).toContain(
      "agent: upstream https://edge.example: trying Watch again (one more cut within 30s goes back to Poll)",
    );
    expect(retried.find((a) => a.do === "open")).toEqual({ do: "open", op: m.state.op, transport: "watch" });
  });
});

/** The PollRequest.request the driver (agent-connect-upstream.ts) encodes from `r`. */
function deltaOf(r: UpstreamRequest | undefined): DeltaDiscoveryRequest {
  if (!r) throw new Error("no request");
  return create(DeltaDiscoveryRequestSchema, {
    typeUrl: r.typeUrl,
    resourceNamesSubscribe: r.subscribe,
    initialResourceVersions: r.initialVersions,
    ...(r.node && { node: r.node }),
    ...(r.error && { errorDetail: r.error }),
  });
}
