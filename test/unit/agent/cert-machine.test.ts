/**
 * lib/agent/cert-machine.ts driven by an injected clock: renewal at the jittered half of the
 * lifetime (Istio's rotateTime), retries with backoff that keep the last certificate published,
 * stale answers ignored, a long wait resumed, stop.
 */
import { describe, expect, it } from "vitest";
import {
  type CertAction,
  type CertContext,
  type CertInput,
  type CertState,
  initialCertState,
  rotateDelay,
  stepCert,
} from "../../../lib/agent/cert-machine.ts";

const hour = 3_600_000;
const identity = "spiffe://cluster.local/ns/shop/sa/cart";

function drive(overrides: Partial<CertContext> = {}) {
  let state: CertState = initialCertState();
  const ctx: CertContext = {
    graceRatio: 0.5,
    graceRatioJitter: 0.01,
    backoff: { initialMs: 100, maxMs: 800 },
    random: () => 0.5,
    identity,
    ...overrides,
  };
  return {
    send(input: CertInput | ((s: CertState) => CertInput)): CertAction[] {
      const [next, actions] = stepCert(state, typeof input === "function" ? input(state) : input, ctx);
      state = next;
      return actions;
    },
    get state() {
      return state;
    },
  };
}

const issued =
  (now: number, expiresAt: number, tag = "a") =>
  (s: CertState): CertInput => ({
    type: "issued",
    op: s.op,
    now,
    secret: { certChainPem: `chain-${tag}`, privateKeyPem: `key-${tag}`, rootCertPem: "root", expiresAt },
  });
const kinds = (actions: CertAction[]) => actions.map((a) => a.do);

describe("rotateDelay", () => {
  const cert = { createdAt: 0, expiresAt: 24 * hour };
  it.each([
    ["no jitter", 0.5, 12 * hour],
    ["the ratio lowered by the whole jitter", 0, 12 * hour + 0.01 * 24 * hour],
    ["the ratio raised by the whole jitter", 0.999_999, 12 * hour - 0.01 * 24 * hour],
  ])("ratio 0.5 ± 0.01 of a 24h certificate, %s", (_case, random, want) => {
    expect(
      rotateDelay(cert, 0, { graceRatio: 0.5, graceRatioJitter: 0.01, random: () => random }),
    ).toBeCloseTo(want, -2);
  });
  it("counts from now, never below zero, the ratio kept within [0, 1]", () => {
    const ctx = { graceRatio: 0.5, graceRatioJitter: 0, random: () => 0.5 };
    expect(rotateDelay(cert, 2 * hour, ctx)).toBe(10 * hour);
    expect(rotateDelay(cert, 20 * hour, ctx)).toBe(0);
    expect(rotateDelay(cert, 0, { ...ctx, graceRatio: 1.5 })).toBe(0);
    expect(rotateDelay(cert, 0, { ...ctx, graceRatio: -1 })).toBe(24 * hour);
  });
});

describe("stepCert", () => {
  it("requests at start, publishes what is issued and waits until the renewal time", () => {
    const m = drive({ random: () => 0.5 });
    expect(m.send({ type: "start", now: 0 })).toEqual([{ do: "request", op: 1 }]);
    const actions = m.send(issued(1000, 1000 + 24 * hour));
    expect(kinds(actions)).toEqual(["publish", "log", "wait"]);
    const publish = actions[0] as Extract<CertAction, { do: "publish" }>;
    expect(publish.secret).toMatchObject({ certChainPem: "chain-a", createdAt: 1000, version: "1" });
    expect(actions[2]).toEqual({ do: "wait", op: 2, ms: 12 * hour });
    expect(m.state.phase).toBe("waiting");
  });

  it("renews at the timer and publishes the next version; the old one was served meanwhile", () => {
    const m = drive();
    m.send({ type: "start", now: 0 });
    m.send(issued(0, 2 * hour));
    expect(m.send((s) => ({ type: "timer", op: s.op, now: hour }))).toEqual([{ do: "request", op: 3 }]);
    expect(m.state.current?.certChainPem).toBe("chain-a");
    const actions = m.send(issued(hour + 5, 3 * hour, "b"));
    expect((actions[0] as Extract<CertAction, { do: "publish" }>).secret).toMatchObject({
      certChainPem: "chain-b",
      version: "2",
    });
  });

  it("retries a failure with growing backoff, keeping the last certificate, and resets on success", () => {
    const m = drive({ random: () => 1 });
    m.send({ type: "start", now: 0 });
    m.send(issued(0, 2 * hour));
    m.send((s) => ({ type: "timer", op: s.op, now: hour }));
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      const actions = m.send((s) => ({ type: "failed", op: s.op, now: hour + i, message: "unavailable" }));
      const log = actions[0] as Extract<CertAction, { do: "log" }>;
      expect(log.level).toBe("warn");
      expect(log.line).toContain("certificate 1 is served until then");
      waits.push((actions[1] as Extract<CertAction, { do: "wait" }>).ms);
      expect(m.send((s) => ({ type: "timer", op: s.op, now: s.wakeAt }))).toEqual([
        { do: "request", op: m.state.op },
      ]);
      expect(m.state.current?.version).toBe("1");
    }
    expect(waits).toEqual([100, 200, 400, 800, 800]);
    m.send(issued(hour + 10, 3 * hour, "b"));
    expect(m.state.failures).toBe(0);
  });

  it("says when the certificate still served has expired, or that none is served yet", () => {
    const m = drive();
    m.send({ type: "start", now: 0 });
    const first = m.send((s) => ({ type: "failed", op: s.op, now: 0, message: "refused" }));
    expect((first[0] as { line: string }).line).toContain("no certificate is served yet");
    m.send((s) => ({ type: "timer", op: s.op, now: s.wakeAt }));
    m.send(issued(0, hour));
    m.send((s) => ({ type: "timer", op: s.op, now: 2 * hour }));
    const late = m.send((s) => ({ type: "failed", op: s.op, now: 2 * hour, message: "refused" }));
    expect((late[0] as { line: string }).line).toContain(
      "expired at 1970-01-01T01:00:00.000Z and is still served",
    );
  });

  it("ignores stale answers and early timers wait on for the rest", () => {
    const m = drive();
    m.send({ type: "start", now: 0 });
    const op = m.state.op;
    m.send(issued(0, 2 * hour));
    expect(m.send({ type: "failed", op, now: 1, message: "late" })).toEqual([]);
    expect(m.send(issued(0, 9 * hour, "x"))).toEqual([]); // the wait's op: not requesting
    expect(m.state.current?.certChainPem).toBe("chain-a");
    // A driver timer that fired before the renewal time (a capped setTimeout) waits on.
    expect(m.send((s) => ({ type: "timer", op: s.op, now: 10 * 60_000 }))).toEqual([
      { do: "wait", op: 3, ms: hour - 10 * 60_000 },
    ]);
    expect(m.send((s) => ({ type: "timer", op: s.op - 1, now: hour }))).toEqual([]);
    expect(m.send((s) => ({ type: "timer", op: s.op, now: hour }))).toEqual([{ do: "request", op: 4 }]);
  });

  it("does nothing once stopped", () => {
    const m = drive();
    m.send({ type: "start", now: 0 });
    m.send({ type: "stop" });
    expect(m.send(issued(0, hour))).toEqual([]);
    expect(m.send({ type: "start", now: 0 })).toEqual([]);
    expect(m.state.current).toBeUndefined();
  });
});
