/** LOG_LEVEL as istiod's --log_output_level, and which entries each threshold lets through. */
import { describe, expect, it } from "vitest";
import { type Level, type LogLevels, levelEnabled, parseLogLevels } from "../../../lib/log/levels.ts";

describe("parseLogLevels", () => {
  it.each<[string, LogLevels]>([
    ["info", { default: "info", scopes: {} }],
    ["debug", { default: "debug", scopes: {} }],
    ["ads:debug,push:warn", { default: "info", scopes: { ads: "debug", push: "warn" } }],
    ["warn,ads:debug", { default: "warn", scopes: { ads: "debug" } }],
    ["all:error, relay:none", { default: "error", scopes: { relay: "none" } }],
    ["ads:Debug", { default: "info", scopes: { ads: "debug" } }],
    ["default:warn", { default: "info", scopes: { default: "warn" } }],
  ])("%s", (raw, want) => {
    expect(parseLogLevels(raw)).toEqual({ ok: true, levels: want });
  });

  it.each([
    ["loud", /^"loud": not a level \(debug, info, warn, error, none\)$/],
    ["ads:loud", /^"ads:loud": not a level/],
    [
      "pilot:debug",
      /^"pilot:debug": not a scope \(ads, push, ingest, security, relay, agent, default, or all\)$/,
    ],
    ["ADS:debug", /^"ADS:debug": not a scope/],
    ["ads:debug,ads:info", /^"ads:info": scope ads is given twice$/],
    ["info,warn", /^"warn": the default level is given twice$/],
    ["ads:debug,,push:info", /^an empty part in "ads:debug,,push:info"$/],
  ])("refuses %s naming the bad part", (raw, error) => {
    const r = parseLogLevels(raw);
    expect(r.ok).toBe(false);
    expect(r.ok === false && r.error).toMatch(error);
  });
});

describe("levelEnabled", () => {
  const levels: LogLevels = { default: "info", scopes: { ads: "debug", push: "warn", relay: "none" } };
  it.each<[string, Level, boolean]>([
    ["ads", "debug", true],
    ["ingest", "debug", false],
    ["ingest", "info", true],
    ["push", "info", false],
    ["push", "warn", true],
    ["push", "error", true],
    ["relay", "error", false],
    ["default", "info", true],
  ])("%s at %s: %s", (scope, level, want) => {
    expect(levelEnabled(levels, scope, level)).toBe(want);
  });
});
