/**
 * The abuse suite, part 2: new streams and unary calls beyond PILOT_MAX_REQUESTS_PER_SECOND (its
 * default, 25/s, burst 1, a caller waits at most 1s as istiod's) are refused with ResourceExhausted
 * naming the variable, what is admitted stays within the rate, and a good proxy whose stream is
 * already open keeps its push latency within 2x.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningControlPlane, startControlPlane } from "../support/runtime.ts";
import { type Attacker, openProbe, type Probe, startAttacker } from "./probe.ts";

const rate = 25;
/** The most a bucket of burst 1 admits in `ms`, counting the second a caller may wait for its turn. */
const admissible = (ms: number) => Math.ceil(1 + (rate * (ms + 1000)) / 1000);

type Flood = { outcomes: Record<string, number>; messages: Record<string, string>; elapsedMs: number };

describe("abuse on XDS_PORT: floods beyond PILOT_MAX_REQUESTS_PER_SECOND", () => {
  let cp: RunningControlPlane;
  let probe: Probe;
  let attacker: Attacker;
  const figures: string[] = [];

  beforeAll(async () => {
    cp = await startControlPlane({ PILOT_DEBOUNCE_AFTER: "50ms" });
    attacker = startAttacker(cp.xdsPort);
    probe = await openProbe(cp);
    await probe.median(3); // warm up
  });
  afterAll(async () => {
    probe?.close();
    attacker?.close();
    console.log(`admission figures:\n${figures.join("\n")}`);
    await cp?.stop();
  });

  it.each([
    "stream-flood",
    "unary-flood",
  ])("%s: the excess is refused, the rate holds, a good proxy is unaffected", async (attack) => {
    const unloaded = await probe.median(7);
    const running = attacker.run<Flood>(attack, 2000);
    await running.underWay;
    const latency = await probe.median(7);
    const measuredUnderAttack = !running.done();
    const r = await running.result;
    figures.push(
      `  ${attack}: ${Math.round(latency)}ms under attack vs ${Math.round(unloaded)}ms, ${JSON.stringify(r.outcomes)} in ${r.elapsedMs}ms`,
    );
    expect(measuredUnderAttack, `${attack} ended before the probe finished measuring`).toBe(true);
    expect(r.outcomes.ResourceExhausted).toBeGreaterThan(0);
    expect(r.messages.ResourceExhausted).toMatch(
      /request rate limit exceeded: this instance admits 25 new streams and calls per second \(PILOT_MAX_REQUESTS_PER_SECOND\)/,
    );
    expect(r.outcomes.answered ?? 0).toBeGreaterThan(0);
    expect(r.outcomes.answered ?? 0).toBeLessThanOrEqual(admissible(r.elapsedMs));
    expect(Object.keys(r.outcomes).sort()).toEqual(["ResourceExhausted", "answered"]);
    expect(latency, `${Math.round(latency)}ms vs ${Math.round(unloaded)}ms unloaded`).toBeLessThanOrEqual(
      2 * unloaded,
    );
  });
});
