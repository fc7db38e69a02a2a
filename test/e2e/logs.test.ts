/**
 * The real entry (functions/node/main.ts, as `npm start` runs it) with LOG_FORMAT=json: every line
 * it prints is one JSON object with time, level, scope and msg, including a proxy's connect and
 * disconnect (node id and stream count), the push it sees (reason, version, resources, duration,
 * streams) and a node id built to break the line; LOG_LEVEL drops a scope's lines below its level.
 * One process (its start is most of the test's few seconds).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AdsStream, openAds } from "./support/ads-client.ts";
import { endpointSlice, event, pod, service } from "./support/kube.ts";
import { type RunningControlPlane, startControlPlane } from "./support/runtime.ts";

const CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
// Quotes, braces and a line separator: what would forge a second entry if written unescaped.
const nodeId = 'sidecar~10.0.0.5~logs"},{"level":"error"\u2028~default.svc.cluster.local';
const port = { name: "grpc", port: 9080 };

interface Entry {
  time: string;
  level: string;
  scope: string;
  msg: string;
  fields?: Record<string, unknown>;
}

let cp: RunningControlPlane;
let ads: AdsStream | undefined;

/** Every line printed so far, each parsed as JSON (a line that is not JSON fails the test). */
const entries = (): Entry[] =>
  cp
    .output()
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => {
      try {
        return JSON.parse(l) as Entry;
      } catch {
        throw new Error(`not a JSON line: ${l}`);
      }
    });

async function until(what: string, found: () => Entry | undefined): Promise<Entry> {
  for (let i = 0; i < 300; i++) {
    const e = found();
    if (e) return e;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no ${what} line in:\n${cp.output()}`);
}

beforeAll(async () => {
  cp = await startControlPlane({
    PILOT_DEBOUNCE_AFTER: "5ms",
    LOG_FORMAT: "json",
    // ingest's info lines are dropped; push and ads stay at info.
    LOG_LEVEL: "info,ingest:warn",
  });
});
afterAll(async () => {
  ads?.close();
  await cp?.stop();
});

describe("LOG_FORMAT=json on the real entry", () => {
  it("prints the start-up lines as JSON entries", async () => {
    // /ready answers once both ports serve; the line is written then too, but reaches our pipe on its own time.
    const start = await until("start-up", () =>
      entries().find((e) => e.msg.startsWith("edgepilot: ingest and REST on")),
    );
    expect(start).toMatchObject({ level: "info", scope: "default" });
    expect(start?.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it("logs a proxy's connection with its node id and the stream count", async () => {
    ads = openAds(cp.xdsPort);
    ads.send({ node: { id: nodeId }, typeUrl: CDS });
    expect(await ads.next()).toBeDefined();
    const connected = await until("connect", () =>
      entries().find((e) => e.msg.includes(" connected (sotw ADS)")),
    );
    expect(connected).toMatchObject({
      level: "info",
      scope: "ads",
      fields: { node: nodeId, type: "sotw", streams: 1 },
    });
  });

  it("logs one line per push with reason, version, resources, duration and streams", async () => {
    const posted = await cp.post([
      event("ADDED", pod("reviews", "default", "10.1.0.1")),
      event("ADDED", service("reviews", "default", [port])),
      event(
        "ADDED",
        endpointSlice("reviews-1", "reviews", "default", port, [{ ip: "10.1.0.1", ready: true }]),
      ),
    ]);
    expect(posted.status).toBe(200);
    const push = await until("push", () =>
      entries().find((e) => e.scope === "push" && /^push \d+:/.test(e.msg)),
    );
    expect(push.level).toBe("info");
    expect(push.fields).toMatchObject({ type: "full", streams: 1 });
    expect(push.fields?.reason).toMatch(/service:1/);
    expect(push.fields?.version).toBeGreaterThan(0);
    expect(push.fields?.resources).toBeGreaterThan(0);
    expect(push.fields?.duration_ms).toBeGreaterThanOrEqual(0);
    expect(entries().filter((e) => e.msg === push.msg)).toHaveLength(1);
    // LOG_LEVEL=ingest:warn: no ingest info line was written.
    expect(entries().filter((e) => e.scope === "ingest" && e.level === "info")).toEqual([]);
  });

  it("logs the disconnection, and every line stays one JSON object", async () => {
    ads?.close();
    const closed = await until("disconnect", () =>
      entries().find((e) => e.msg.includes(" disconnected after ")),
    );
    expect(closed).toMatchObject({
      level: "info",
      scope: "ads",
      fields: { node: nodeId, type: "sotw", streams: 0 },
    });
    expect(entries().filter((e) => e.fields?.node === nodeId)).toHaveLength(2);
    for (const e of entries()) expect(Object.keys(e).slice(0, 4)).toEqual(["time", "level", "scope", "msg"]);
  });
});
