import { describe, expect, it } from "vitest";
import { type AgentInput, type AgentState, removalsAllowed } from "../../../lib/agent/machine.ts";
import { maxNamesPerUpstreamRequest } from "../../../lib/agent/requests.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { driveMachine, logs, node, sends } from "./machine-driver.ts";

const CDS = TypeUrl.cluster;
const EDS = TypeUrl.endpoint;
const LDS = TypeUrl.listener;

describe("agent machine: the upstream stream", () => {
  it("opens at the first local ask, sending the node once and the ask", () => {
    const m = driveMachine();
    const actions = m.ask(LDS, [], true);
    expect(actions[0]).toEqual({ do: "open", op: 1, transport: "ads" });
    expect(sends(actions)).toEqual([
      { typeUrl: LDS, node, subscribe: ["*"], initialVersions: {}, responseNonce: "" },
    ]);
    expect(m.state.phase).toBe("streaming");
    // A later ask on the open stream: only what is new, no node.
    expect(sends(m.ask(CDS, ["b", "a"]))).toEqual([
      { typeUrl: CDS, subscribe: ["b", "a"], initialVersions: {}, responseNonce: "" },
    ]);
    expect(m.ask(CDS, ["a"])).toEqual([]);
    expect(sends(m.ask(CDS, ["a", "c"]))[0]?.subscribe).toEqual(["c"]);
  });

  it("asks upstream only for the types it serves (it refuses a whole stream asking for another)", () => {
    const m = driveMachine();
    expect(m.ask("type.googleapis.com/envoy.config.route.v3.ScopedRouteConfiguration", ["s"])).toEqual([]);
    expect(m.state.phase).toBe("idle");
    m.ask(CDS, [], true);
    expect(m.ask("type.googleapis.com/envoy.service.runtime.v3.Runtime", ["r"])).toEqual([]);
  });

  it("subscribes many names a slice at a time, the first request carrying the node and the cache", () => {
    const m = driveMachine();
    m.ask(CDS, [], true);
    m.respond(CDS, "n1", [["a", "v1"]]);
    m.end();
    const names = Array.from({ length: 2500 }, (_, i) => `e${String(i).padStart(4, "0")}`);
    m.ask(EDS, names);
    const requests = sends(m.send((s) => ({ type: "timer", op: s.op })));
    expect(
      requests.map((r) => [
        r.typeUrl,
        r.subscribe.length,
        Object.keys(r.initialVersions),
        r.node !== undefined,
      ]),
    ).toEqual([
      [CDS, 1, ["a"], true],
      [EDS, maxNamesPerUpstreamRequest, [], false],
      [EDS, maxNamesPerUpstreamRequest, [], false],
      [EDS, 500, [], false],
    ]);
    expect(requests.slice(1).flatMap((r) => r.subscribe)).toEqual(names);
  });

  it("caches only what changed and only removals of names it holds; ready at the first response", () => {
    const m = driveMachine();
    m.ask(CDS, [], true);
    const first = m.respond(CDS, "n1", [
      ["a", "v1"],
      ["b", "v1"],
    ]);
    expect(first.filter((a) => a.do !== "log")).toEqual([
      {
        do: "cache",
        typeUrl: CDS,
        upserts: [
          { name: "a", version: "v1", body: new Uint8Array([1]) },
          { name: "b", version: "v1", body: new Uint8Array([1]) },
        ],
        removed: [],
      },
      { do: "ackAt", at: 1500 },
    ]);
    expect(logs(first)).toEqual(["agent: upstream http://up:15010: first configuration cached; ready"]);
    const second = m.respond(CDS, "n2", [["a", "v1"]], ["b", "never-held"]);
    expect(second).toEqual([
      { do: "cache", typeUrl: CDS, upserts: [], removed: ["b"] },
      { do: "ackAt", at: 1500 },
    ]);
    expect([...(m.state.held.get(CDS) ?? [])]).toEqual([["a", "v1"]]);
  });

  it("starts from a disk cache's versions: sent as initial_resource_versions, no readiness, no removals", () => {
    const m = driveMachine({ held: new Map([[CDS, new Map([["a", "v1"]])]]) });
    expect(m.state.ready).toBe(false);
    expect(sends(m.ask(CDS, [], true))).toEqual([
      { typeUrl: CDS, node, subscribe: ["*"], initialVersions: { a: "v1" }, responseNonce: "" },
    ]);
    expect(removalsAllowed(m.state)).toBe(false);
    // The upstream holds the same: nothing to cache; its answer then allows removals.
    expect(m.respond(CDS, "n1", [["a", "v1"]]).some((x) => x.do === "cache")).toBe(false);
    expect(removalsAllowed(m.state)).toBe(true);
  });

  it("allows local removals only once every type asked for was answered", () => {
    const m = driveMachine();
    expect(removalsAllowed(m.state)).toBe(false);
    m.ask(LDS, [], true);
    m.ask(CDS, [], true);
    m.respond(LDS, "n1", [["l", "v1"]]);
    expect(m.state.ready).toBe(true);
    expect(removalsAllowed(m.state)).toBe(false);
    m.respond(CDS, "n2", []);
    expect(removalsAllowed(m.state)).toBe(true);
    // A new type closes it until its first answer; a stream ending does not.
    m.ask(EDS, ["e"]);
    expect(removalsAllowed(m.state)).toBe(false);
    m.respond(EDS, "n3", [], ["e"]);
    m.end();
    expect(removalsAllowed(m.state)).toBe(true);
  });

  it("ACKs the last response of each type once its NACK window passed", () => {
    const m = driveMachine();
    m.ask(CDS, [], true);
    m.respond(CDS, "n1", [["a", "v1"]]);
    m.tick(200);
    m.respond(CDS, "n2", [["a", "v2"]]);
    m.tick(400);
    expect(m.send({ type: "tick", now: m.now })).toEqual([{ do: "ackAt", at: 1700 }]);
    m.tick(100);
    expect(sends(m.send({ type: "tick", now: m.now }))).toEqual([
      { typeUrl: CDS, subscribe: [], initialVersions: {}, responseNonce: "n2" },
    ]);
    expect(m.send({ type: "tick", now: m.now + 10_000 })).toEqual([]);
  });

  it("forwards a local NACK with the proxy's error on the response awaiting its ACK, never its own", () => {
    const m = driveMachine();
    m.ask(CDS, [], true);
    m.respond(CDS, "n1", [["a", "v1"]]);
    const nack = m.send({ type: "nack", nodeId: "p1", typeUrl: CDS, code: 3, message: "bad cluster" });
    expect(sends(nack)).toEqual([
      {
        typeUrl: CDS,
        subscribe: [],
        initialVersions: {},
        responseNonce: "n1",
        error: { code: 3, message: "p1: bad cluster" },
      },
    ]);
    // Answered: no ACK follows, and a second NACK has nothing to answer.
    expect(m.send({ type: "tick", now: m.now + 1000 })).toEqual([]);
    const late = m.send({ type: "nack", nodeId: "p2", typeUrl: CDS, code: 3, message: "again" });
    expect(sends(late)).toEqual([]);
    expect(logs(late)[0]).toMatch(/NACK of .* from local proxy "p2": "again"; not forwarded/);
  });
});

describe("agent machine: reconnects keep the last good configuration", () => {
  it("retries with a growing backoff, telling the upstream what the cache holds", () => {
    const m = driveMachine();
    m.ask(CDS, [], true);
    m.ask(EDS, ["e1"]);
    m.respond(CDS, "n1", [["a", "v1"]]);
    const ended = m.end();
    expect(ended.filter((a) => a.do !== "log")).toEqual([{ do: "close" }, { do: "wait", op: 2, ms: 100 }]);
    expect(logs(ended)[0]).toMatch(/stream ended \(unavailable: "connection refused"\); local proxies keep/);
    // The cache is untouched by the end: nothing removed, still ready.
    expect(m.state.ready).toBe(true);
    expect([...(m.state.held.get(CDS) ?? [])]).toEqual([["a", "v1"]]);
    const reopened = m.send({ type: "timer", op: 2 });
    expect(reopened[0]).toEqual({ do: "open", op: 3, transport: "ads" });
    expect(sends(reopened)).toEqual([
      { typeUrl: CDS, node, subscribe: ["*"], initialVersions: { a: "v1" }, responseNonce: "" },
      { typeUrl: EDS, subscribe: ["e1"], initialVersions: {}, responseNonce: "" },
    ]);
    const delays = [2, 3, 4, 5].map(() => {
      const w = m.end().find((a) => a.do === "wait");
      m.send((s) => ({ type: "timer", op: s.op }));
      return w?.do === "wait" ? w.ms : -1;
    });
    expect(delays).toEqual([200, 400, 800, 800]);
  });

  it("ignores what an ended stream says afterwards (stale op)", () => {
    const m = driveMachine();
    m.ask(CDS, [], true);
    m.end();
    const stale: AgentInput = {
      type: "response",
      op: 1,
      now: 0,
      typeUrl: CDS,
      nonce: "x",
      resources: [],
      removed: ["a"],
    };
    expect(m.send(stale)).toEqual([]);
    expect(m.send({ type: "ended", op: 1, now: 0, code: "unavailable", message: "" })).toEqual([]);
    expect(m.send({ type: "timer", op: 1 })).toEqual([]);
  });

  it("starts over from the first delay after a stream that lived long", () => {
    const m = driveMachine();
    m.ask(CDS, [], true);
    m.end();
    m.send((s) => ({ type: "timer", op: s.op }));
    m.send((s) => ({ type: "connected", op: s.op, now: m.now }));
    m.tick(10_000);
    expect(m.end().find((a) => a.do === "wait")).toMatchObject({ ms: 100 });
  });

  it("says a refused token is the file's, and tries a rewritten token at once", () => {
    const m = driveMachine();
    m.ask(CDS, [], true);
    const refused = m.end("unauthenticated", "invalid token");
    expect(logs(refused)[0]).toMatch(
      /refused the token \(UNAUTHENTICATED: "invalid token"\); check the token file \/var\/run\/token, it is re-read when it changes/,
    );
    expect(m.send({ type: "tokenChanged" })[0]).toEqual({ do: "open", op: 3, transport: "ads" });
    // While streaming a token change waits for the next stream.
    expect(m.send({ type: "tokenChanged" })).toEqual([]);
  });

  it("logs a line per upstream state change, not per retry", () => {
    const m = driveMachine();
    const said: string[] = [];
    const run = (input: AgentInput | ((s: AgentState) => AgentInput)) => said.push(...logs(m.send(input)));
    const retry = () => run((s) => ({ type: "timer", op: s.op }));
    const connected = () => run((s) => ({ type: "connected", op: s.op, now: m.now }));
    said.push(...logs(m.ask(CDS, [], true)));
    for (let i = 0; i < 5; i++) {
      run((s) => ({ type: "ended", op: s.op, now: m.now, code: "unavailable", message: "ECONNREFUSED" }));
      retry();
    }
    // Reachable again, but the token is refused, again and again.
    for (let i = 0; i < 3; i++) {
      connected();
      run((s) => ({ type: "ended", op: s.op, now: m.now, code: "unauthenticated", message: "wrong token" }));
      retry();
    }
    run({ type: "tokenChanged" });
    connected();
    expect(
      said.map((l) =>
        l.replace(/; local proxies keep.*/, "").replace("agent: upstream http://up:15010: ", ""),
      ),
    ).toEqual([
      "connecting",
      'stream ended (unavailable: "ECONNREFUSED")',
      'stream ended (unavailable: "ECONNREFUSED") (2 failed attempts)',
      'stream ended (unavailable: "ECONNREFUSED") (4 failed attempts)',
      "connected",
      expect.stringMatching(/^the upstream refused the token .* \(6 failed attempts\)$/),
      expect.stringMatching(/^the upstream refused the token .* \(8 failed attempts\)$/),
      "connected with the new token",
    ]);
  });

  it("stops for good", () => {
    const m = driveMachine();
    m.ask(CDS, [], true);
    expect(m.send({ type: "stop" })).toEqual([{ do: "close" }]);
    expect(m.ask(LDS, [], true)).toEqual([]);
    expect(m.send({ type: "tokenChanged" })).toEqual([]);
  });
});
