/** parseConfig: EDGEPILOT_STORE_POLL_INTERVAL, and which stores are shared by several instances. */
import { describe, expect, it } from "vitest";
import { type Env, parseConfig, sharedStore } from "../../lib/config.ts";

describe("parseConfig: EDGEPILOT_STORE_POLL_INTERVAL", () => {
  const accepted: [string, Env, number][] = [
    ["1s by default", {}, 1000],
    ["empty as unset", { EDGEPILOT_STORE_POLL_INTERVAL: "" }, 1000],
    ["a Go-style duration", { EDGEPILOT_STORE_POLL_INTERVAL: "250ms" }, 250],
    ["seconds", { EDGEPILOT_STORE_POLL_INTERVAL: "5s" }, 5000],
  ];
  it.each(accepted)("accepts %s", (_, env, ms) => {
    const parsed = parseConfig(env);
    expect(parsed.ok && parsed.config.storePollIntervalMs).toBe(ms);
  });

  const refused: [string, Env, RegExp][] = [
    [
      "zero",
      { EDGEPILOT_STORE_POLL_INTERVAL: "0s" },
      /^EDGEPILOT_STORE_POLL_INTERVAL=0s: must be more than 0$/,
    ],
    ["no duration", { EDGEPILOT_STORE_POLL_INTERVAL: "often" }, /^EDGEPILOT_STORE_POLL_INTERVAL: /],
  ];
  it.each(refused)("refuses %s, naming the variable", (_, env, error) => {
    const parsed = parseConfig(env);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok)
      expect(
        parsed.errors.some((e) => error.test(e)),
        parsed.errors.join("\n"),
      ).toBe(true);
  });
});

describe("sharedStore", () => {
  const cases: [Env, boolean][] = [
    [{}, false],
    [{ EDGEPILOT_STORE: "file", EDGEPILOT_DATA_DIR: "/tmp/x" }, false],
    [{ EDGEPILOT_STORE: "dynamodb", DYNAMODB_ENDPOINT: "http://127.0.0.1:4567" }, true],
  ];
  it.each(cases)("%j ▶ %s", (env, shared) => {
    const parsed = parseConfig(env);
    if (!parsed.ok) throw new Error(parsed.errors.join("\n"));
    expect(sharedStore(parsed.config.store)).toBe(shared);
  });
});
