/**
 * The logger and the `(line) => void` adapter: scopes from prefixes, levels per scope, call sites
 * that give a level, and what a plain function (a test's array) still receives.
 */
import { describe, expect, it } from "vitest";
import { parseLogConfig } from "../../../lib/log/config.ts";
import type { LogFormat } from "../../../lib/log/format.ts";
import { type Level, parseLogLevels } from "../../../lib/log/levels.ts";
import { logAt, logDebug, logError, logWarn } from "../../../lib/log/line-log.ts";
import { createLogger } from "../../../lib/log/logger.ts";
import { scopeOf } from "../../../lib/log/scopes.ts";

const at = Date.UTC(2026, 10, 23, 17, 0, 0, 0);

/** A logger over an injected clock, its lines kept with the level they were written at. */
function logger(format: LogFormat, levelSpec = "info") {
  const parsed = parseLogLevels(levelSpec);
  if (!parsed.ok) throw new Error(parsed.error);
  const lines: { line: string; level: Level }[] = [];
  let now = at;
  const l = createLogger({
    format,
    levels: parsed.levels,
    now: () => now++,
    out: (line, level) => lines.push({ line, level }),
  });
  return { logger: l, lines };
}

describe("scopeOf", () => {
  it.each([
    ["xds: could not record", "ads"],
    ["push 12: full, 3 resource(s) changed", "push"],
    ["push: VirtualService x not applied", "push"],
    ["debounce: turn failed", "push"],
    ["views: dropped", "push"],
    ["ingest: rejected", "ingest"],
    ["sync: registry synced", "ingest"],
    ["auth: JWKS not refreshed", "security"],
    ["relay: Pod: watch restarted", "relay"],
    ["agent: SIGTERM", "agent"],
    ["edgepilot: store: file x", "default"],
    ["core: an onPush observer failed", "default"],
    ["constructor: not a prefix", "default"],
    ['"xds": quoted', "default"],
    ["no prefix at all", "default"],
  ])("%s ▶ %s", (line, scope) => {
    expect(scopeOf(line)).toBe(scope);
  });
});

describe("the line adapter", () => {
  it("writes a plain line at info in its prefix's scope, the line whole as the message", () => {
    const { logger: l, lines } = logger("text");
    l.line('xds: proxy "a" connected');
    expect(lines).toEqual([
      { line: '2026-11-23T17:00:00.000Z\tinfo\tads\txds: proxy "a" connected', level: "info" },
    ]);
  });

  it("takes a level and fields from logAt, logWarn, logError and logDebug", () => {
    const { logger: l, lines } = logger("json", "debug");
    logWarn(l.line, "xds: NACK", { node: "n1" });
    logError(l.line, "xds: could not record the status");
    logDebug(l.line, "relay: Pod: queued ADDED x");
    logAt(l.line, "info", "push 2: incremental", { version: 2 });
    expect(lines.map((x) => [x.level, JSON.parse(x.line)])).toEqual([
      [
        "warn",
        {
          time: "2026-11-23T17:00:00.000Z",
          level: "warn",
          scope: "ads",
          msg: "xds: NACK",
          fields: { node: "n1" },
        },
      ],
      [
        "error",
        {
          time: "2026-11-23T17:00:00.001Z",
          level: "error",
          scope: "ads",
          msg: "xds: could not record the status",
        },
      ],
      [
        "debug",
        {
          time: "2026-11-23T17:00:00.002Z",
          level: "debug",
          scope: "relay",
          msg: "relay: Pod: queued ADDED x",
        },
      ],
      [
        "info",
        {
          time: "2026-11-23T17:00:00.003Z",
          level: "info",
          scope: "push",
          msg: "push 2: incremental",
          fields: { version: 2 },
        },
      ],
    ]);
  });

  it("drops a line below its scope's level and keeps the others", () => {
    const { logger: l, lines } = logger("text", "ads:debug,push:warn,relay:none");
    l.line("push 3: full"); // info < warn: dropped
    logWarn(l.line, "push: route not applied"); // kept
    logDebug(l.line, "xds: detail"); // ads at debug: kept
    logDebug(l.line, "ingest: detail"); // default info: dropped
    logError(l.line, "relay: failed"); // none: dropped
    l.line("edgepilot: started"); // default info: kept
    expect(lines.map((x) => x.line.split("\t").slice(1).join(" "))).toEqual([
      "warn push push: route not applied",
      "debug ads xds: detail",
      "info default edgepilot: started",
    ]);
    expect(l.enabled("ads", "debug")).toBe(true);
    expect(l.enabled("ingest", "debug")).toBe(false);
  });

  it("reads WARNING: and ERROR: after the prefix as the level of a plain line", () => {
    const { logger: l, lines } = logger("text");
    l.line("edgepilot: WARNING: XDS_AUTH=none");
    l.line("relay: ERROR: ingest rejected event 3");
    l.line("relay: the word ERROR: later is not a level");
    expect(lines.map((x) => x.level)).toEqual(["warn", "error", "info"]);
  });

  it("gives a plain (line) => void the bare line, fields left out", () => {
    const got: string[] = [];
    const plain = (line: string) => got.push(line);
    logWarn(plain, "xds: NACK", { node: "n1" });
    logAt(plain, "info", "push 1: full", { version: 1 });
    expect(got).toEqual(["xds: NACK", "push 1: full"]);
  });
});

describe("parseLogConfig", () => {
  it.each([
    [{}, { format: "text", default: "info" }],
    [
      { LOG_FORMAT: "json", LOG_LEVEL: "warn,ads:debug" },
      { format: "json", default: "warn" },
    ],
    [
      { LOG_FORMAT: "", LOG_LEVEL: "" },
      { format: "text", default: "info" },
    ],
    [{ LOG_FORMAT: "JSON" }, { format: "json", default: "info" }],
  ])("%o", (env, want) => {
    const errors: string[] = [];
    const c = parseLogConfig(env, errors);
    expect(errors).toEqual([]);
    expect({ format: c.format, default: c.levels.default }).toEqual(want);
  });

  it("names the variable and the bad part of each", () => {
    const errors: string[] = [];
    const c = parseLogConfig({ LOG_FORMAT: "xml", LOG_LEVEL: "ads:debug,pilot:warn" }, errors);
    expect(errors).toEqual([
      "LOG_FORMAT=xml: not a log format (text or json)",
      'LOG_LEVEL=ads:debug,pilot:warn: "pilot:warn": not a scope (ads, push, ingest, security, relay, agent, default, or all)',
    ]);
    expect(c).toEqual({ format: "text", levels: { default: "info", scopes: {} } });
  });
});
