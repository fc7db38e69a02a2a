/**
 * The abuse suite (issue 7 §2): against a real Node control plane whose heap is capped, each attack
 * on XDS_PORT, run from its own process (attacker.ts), is refused or bounded; the control plane
 * survives every one; and a well-behaved proxy's push latency while the attack is in place stays
 * within 2x of its unloaded value measured in the same run. The admission rate is raised here so
 * that each attack meets its own bound; admission-rate.test.ts floods past the default rate.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CDS } from "../delta/mesh.ts";
import { openAds } from "../support/ads-client.ts";
import { type RunningControlPlane, startControlPlane } from "../support/runtime.ts";
import { type Attacker, openProbe, type Probe, rssMb, startAttacker } from "./probe.ts";

const MB = 1024 * 1024;
/** Under attack, the good proxy's median push latency may be at most this times the unloaded one. */
const maxSlowdown = 2;
/**
 * The control plane's old-space cap: below the 182 MB that 182 streams with 1 MB node ids once
 * kept, and far below the 64 MB × streams a request buffer or an unread inbox could grow to.
 */
const heapMb = 128;

type Figures = {
  attack: string;
  unloadedMs: number;
  latencyMs: number;
  rssMb?: number | undefined;
  result: string;
};

describe("abuse on XDS_PORT: each attack is refused or bounded, a good proxy keeps its push latency", () => {
  let cp: RunningControlPlane;
  let probe: Probe;
  let attacker: Attacker;
  const figures: Figures[] = [];

  /** Runs `attack` in its own process and measures the probe while it is in place. */
  async function underAttack<T>(attack: string, holdMs = 2000): Promise<T> {
    // The unloaded figure is taken again right before each attack: the machine's load drifts.
    const t0 = performance.now();
    const unloaded = await probe.median(7);
    const t1 = performance.now();
    const running = attacker.run<T>(attack, holdMs);
    await running.underWay;
    const latency = await probe.median(7);
    // The figure counts only if the attack was still in place when the last sample was taken.
    const measuredUnderAttack = !running.done();
    const t2 = performance.now();
    const result = await running.result;
    const took = `baseline ${Math.round(t1 - t0)}ms, under way + probe ${Math.round(t2 - t1)}ms, attack ${Math.round(performance.now() - t1)}ms`;
    expect(measuredUnderAttack, `${attack} ended before the probe finished measuring`).toBe(true);
    figures.push({
      attack,
      unloadedMs: Math.round(unloaded),
      latencyMs: Math.round(latency),
      rssMb: rssMb(cp.process.pid),
      result: `${JSON.stringify(result).slice(0, 300)} (${took})`,
    });
    expect(cp.process.exitCode, `the control plane died during ${attack}:\n${cp.output()}`).toBeNull();
    expect(
      latency,
      `${attack}: ${Math.round(latency)}ms vs ${Math.round(unloaded)}ms unloaded`,
    ).toBeLessThanOrEqual(maxSlowdown * unloaded);
    return result;
  }

  beforeAll(async () => {
    cp = await startControlPlane({
      // Small, as in the issue's figures (70 ms unloaded), yet above the jitter of a shared machine.
      PILOT_DEBOUNCE_AFTER: "50ms",
      PILOT_MAX_REQUESTS_PER_SECOND: "5000",
      NODE_OPTIONS: `--max-old-space-size=${heapMb}`,
    });
    attacker = startAttacker(cp.xdsPort);
    probe = await openProbe(cp);
    await probe.median(3); // warm up
    figures.push({
      attack: "(start)",
      unloadedMs: 0,
      latencyMs: 0,
      rssMb: rssMb(cp.process.pid),
      result: "",
    });
  });
  afterAll(async () => {
    probe?.close();
    attacker?.close();
    console.log(
      `abuse figures: median push latency of the good proxy under each attack, control plane RSS after it\n${figures
        .map(
          (f) =>
            `  ${f.attack}: ${f.latencyMs}ms (unloaded just before: ${f.unloadedMs}ms), RSS ${f.rssMb?.toFixed(0) ?? "?"} MB ${f.result}`,
        )
        .join("\n")}`,
    );
    await cp?.stop();
  });

  it("refuses 200 short streams with 1 MB node ids (InvalidArgument) and keeps nothing of them", async () => {
    const r = await underAttack<{
      opened: number;
      outcomes: Record<string, number>;
      messages: Record<string, string>;
    }>("huge-node-ids");
    // Every stream opened (at least 200, more when the server refuses them faster than holdMs) is refused.
    expect(r.opened).toBeGreaterThanOrEqual(200);
    expect(r.outcomes).toEqual({ InvalidArgument: r.opened });
    expect(r.messages.InvalidArgument).toMatch(/node\.id is 1048576 characters; at most 1024/);
  });

  it("serves at most EDGEPILOT_MAX_STREAMS_PER_CONNECTION (100) of 2,000 grpc-js streams on one channel", async () => {
    const r = await underAttack<{ answered: number; errors: Record<string, number> }>("many-streams");
    expect(r.answered).toBeGreaterThan(0);
    expect(r.answered).toBeLessThanOrEqual(100);
  });

  it("refuses streams past the limit from a client that ignores SETTINGS (REFUSED_STREAM)", async () => {
    const r = await underAttack<{ refused: number; goaway?: number; closed: boolean }>("raw-flood");
    // At most 100 of the 1,000 were taken: the rest were refused, or the connection was closed.
    expect(r.refused >= 900 || r.goaway !== undefined).toBe(true);
  });

  it("refuses a 64 MB DiscoveryRequest from its 5-byte prefix, without reading the body", async () => {
    const r = await underAttack<{ grpcStatus?: string; message: string; sent: number }>("64mb-message");
    expect(r.grpcStatus).toBe("8"); // RESOURCE_EXHAUSTED
    expect(r.message).toMatch(/larger than configured readMaxBytes 4194304/);
    expect(r.sent).toBeLessThan(8 * MB);
  });

  it("holds back a client that keeps sending and never reads, by HTTP/2 flow control", async () => {
    const r = await underAttack<{ sent: number }>("non-reading");
    expect(r.sent).toBeLessThan(4 * MB);
  });

  it("escapes NACK error_detail in the log: newlines cannot forge lines; a node id with one is refused", async () => {
    const ads = openAds(cp.xdsPort);
    ads.send({
      node: {
        id: "sidecar~10.0.0.7~forger.default~default.svc.cluster.local",
        metadata: { GENERATOR: "grpc" },
      },
      typeUrl: CDS,
    });
    const r = await ads.next();
    ads.send({
      typeUrl: CDS,
      responseNonce: r?.nonce,
      errorDetail: { code: 3, message: "bad\nedgepilot: forged line\r\nxds: another forged line" },
    });
    for (let i = 0; i < 100 && !cp.output().includes("forged"); i++)
      await new Promise((r) => setTimeout(r, 20));
    ads.close();
    const lines = cp.output().split("\n");
    expect(lines.some((l) => l.includes("NACKed") && l.includes("bad\\nedgepilot: forged line\\r\\n"))).toBe(
      true,
    );
    expect(lines.filter((l) => /^(edgepilot|xds): (another )?forged/.test(l))).toEqual([]);

    const bad = openAds(cp.xdsPort);
    bad.send({ node: { id: "evil\nxds: forged" }, typeUrl: CDS });
    expect(await bad.next(1000)).toBeUndefined();
    expect(bad.error()).toMatch(/invalid_argument.*node\.id has a control character .*U\+000A/i);
    bad.close();
  });

  it("ends a SotW stream that asks for more than 16 type URLs (each is state the stream keeps)", async () => {
    const ads = openAds(cp.xdsPort);
    ads.send({
      node: {
        id: "sidecar~10.0.0.8~collector.default~default.svc.cluster.local",
        metadata: { GENERATOR: "grpc" },
      },
      typeUrl: CDS,
    });
    expect((await ads.next())?.typeUrl).toBe(CDS);
    for (let i = 1; i < 16; i++) ads.send({ typeUrl: `type.example.com/t${i}` });
    for (let i = 1; i < 16; i++) expect((await ads.next())?.typeUrl).toBe(`type.example.com/t${i}`);
    ads.send({ typeUrl: "type.example.com/one-too-many" });
    expect(await ads.next(1000)).toBeUndefined();
    expect(ads.error()).toMatch(/resource_exhausted.*already asked for 16 type URLs/i);
    ads.close();
  });
});
