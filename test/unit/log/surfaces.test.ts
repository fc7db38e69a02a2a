/**
 * The lines the issue asks for, as the core and the ADS handlers write them: one per push (an
 * onPush observer) and one per proxy connect and disconnect, with their fields.
 */
import { describe, expect, it } from "vitest";
import type { Flush } from "../../../lib/core/hooks.ts";
import { createPushLogObserver, pushReason } from "../../../lib/core/push-log.ts";
import { createLogger } from "../../../lib/log/logger.ts";
import { createConnectionLog } from "../../../lib/xds/connection-log.ts";

const at = Date.UTC(2026, 10, 23, 17, 0, 0, 0);

function jsonLogger() {
  const lines: string[] = [];
  const logger = createLogger({
    format: "json",
    levels: { default: "info", scopes: {} },
    now: () => at,
    out: (line) => lines.push(line),
  });
  return { log: logger.line, entries: () => lines.map((l) => JSON.parse(l)) };
}

const flush = (over: Partial<Flush> = {}): Flush => ({
  kind: "done",
  version: 7,
  request: { full: true, configsUpdated: null, reasons: { config: 1, endpoint: 3 }, start: at - 120 },
  changes: [
    { typeUrl: "c", name: "a" },
    { typeUrl: "c", name: "b" },
  ] as unknown as Flush["changes"],
  recovered: false,
  ...over,
});

describe("the push log observer", () => {
  it.each([
    [
      "a full push reaching streams",
      { streams: true },
      flush(),
      "push 7: full, 2 resource(s) changed, 120ms after the first event, 4 stream(s)",
      { version: 7, type: "full", reason: "config:1,endpoint:3", resources: 2, duration_ms: 120, streams: 4 },
    ],
    [
      "an incremental push on a host that does not count streams",
      {},
      flush({ request: { full: false, configsUpdated: [], reasons: { endpoint: 1 }, start: at - 5 } }),
      "push 7: incremental, 2 resource(s) changed, 120ms after the first event",
      { version: 7, type: "incremental", reason: "endpoint:1", resources: 2, duration_ms: 120 },
    ],
    [
      "a recovered flush without its request",
      { streams: true },
      flush({ request: undefined, changes: [], recovered: true }),
      "push 7: incremental, 0 resource(s) changed, 120ms after the first event, 4 stream(s)",
      { version: 7, type: "incremental", reason: "recovered", resources: 0, duration_ms: 120, streams: 4 },
    ],
  ])("%s", (_, options, f, msg, fields) => {
    const { log, entries } = jsonLogger();
    createPushLogObserver(log, options).onPush?.({ flush: f, latencyMs: 120, streams: 4 });
    expect(entries()).toEqual([
      { time: "2026-11-23T17:00:00.000Z", level: "info", scope: "push", msg, fields },
    ]);
  });

  it("says nothing for a flush that changed nothing", () => {
    const { log, entries } = jsonLogger();
    createPushLogObserver(log).onPush?.({ flush: flush({ changes: [] }), latencyMs: 1, streams: 0 });
    expect(entries()).toEqual([]);
  });

  it("names Istio's reasons with their counts", () => {
    expect(pushReason(flush())).toBe("config:1,endpoint:3");
    expect(pushReason(flush({ request: undefined }))).toBe("unknown");
  });
});

describe("the connection log", () => {
  it("logs one connect and one disconnect line per stream, with the node and the stream count", () => {
    const { log, entries } = jsonLogger();
    let now = 1000;
    let streams = 1;
    const conn = createConnectionLog({ log, now: () => now, streams: () => streams });
    const node = 'sidecar~10.0.0.7~a"},{"forged":1\u2028~x';
    const s = conn("delta");
    s.connected(node);
    s.connected(node); // later requests of the stream say nothing
    now = 3500;
    streams = 0;
    s.closed();
    s.closed();
    const shown = '"sidecar~10.0.0.7~a\\"},{\\"forged\\":1\\u2028~x"';
    expect(entries()).toEqual([
      {
        time: "2026-11-23T17:00:00.000Z",
        level: "info",
        scope: "ads",
        msg: `xds: proxy ${shown} connected (delta ADS), 1 stream(s) open`,
        fields: { node, type: "delta", streams: 1 },
      },
      {
        time: "2026-11-23T17:00:00.000Z",
        level: "info",
        scope: "ads",
        msg: `xds: proxy ${shown} disconnected after 2500ms (delta ADS), 0 stream(s) open`,
        fields: { node, type: "delta", streams: 0, connected_ms: 2500 },
      },
    ]);
  });

  it("logs nothing for a stream refused before a valid request", () => {
    const { log, entries } = jsonLogger();
    createConnectionLog({ log, now: () => 0, streams: () => 0 })("sotw").closed();
    expect(entries()).toEqual([]);
  });
});
