/** parseConfig: the XDS_PORT bounds of issue 7 (streams per connection, admission rate). */
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../lib/config.ts";
import { defaultLimits } from "../../lib/xds/limits.ts";

describe("parseConfig: XDS_PORT limits", () => {
  it("defaults to 100 streams per connection and istiod's 25 requests per second", () => {
    const parsed = parseConfig({});
    expect(parsed.ok && parsed.config.limits).toEqual({
      ...defaultLimits,
      maxStreamsPerConnection: 100,
      maxRequestsPerSecond: 25,
    });
  });

  it.each([
    { env: { EDGEPILOT_MAX_STREAMS_PER_CONNECTION: "8" }, want: { maxStreamsPerConnection: 8 } },
    { env: { PILOT_MAX_REQUESTS_PER_SECOND: "100" }, want: { maxRequestsPerSecond: 100 } },
    { env: { PILOT_MAX_REQUESTS_PER_SECOND: "0.5" }, want: { maxRequestsPerSecond: 0.5 } },
    // As istiod: 0 means "choose the default".
    { env: { PILOT_MAX_REQUESTS_PER_SECOND: "0" }, want: { maxRequestsPerSecond: 25 } },
    { env: { PILOT_MAX_REQUESTS_PER_SECOND: "" }, want: { maxRequestsPerSecond: 25 } },
  ])("$env", ({ env, want }) => {
    const parsed = parseConfig(env);
    expect(parsed.ok && parsed.config.limits).toMatchObject(want);
  });

  it.each([
    {
      env: { EDGEPILOT_MAX_STREAMS_PER_CONNECTION: "0" },
      error: /^EDGEPILOT_MAX_STREAMS_PER_CONNECTION=0: not a positive whole number$/,
    },
    {
      env: { EDGEPILOT_MAX_STREAMS_PER_CONNECTION: "1.5" },
      error: /^EDGEPILOT_MAX_STREAMS_PER_CONNECTION=1\.5: not a positive/,
    },
    {
      env: { PILOT_MAX_REQUESTS_PER_SECOND: "-1" },
      error: /^PILOT_MAX_REQUESTS_PER_SECOND=-1: not a non-negative number/,
    },
    {
      env: { PILOT_MAX_REQUESTS_PER_SECOND: "fast" },
      error: /^PILOT_MAX_REQUESTS_PER_SECOND=fast: not a non-negative number/,
    },
    { env: { PILOT_MAX_REQUESTS_PER_SECOND: "Infinity" }, error: /^PILOT_MAX_REQUESTS_PER_SECOND=Infinity/ },
  ])("refuses $env naming the variable", ({ env, error }) => {
    const parsed = parseConfig(env);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.errors).toEqual([expect.stringMatching(error)]);
  });
});
