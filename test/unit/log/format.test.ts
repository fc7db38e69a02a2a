/** The two renderings of a log entry: istiod's text line and one JSON object per line. */
import { describe, expect, it } from "vitest";
import { formatJson, formatText, type LogEntry, rfc3339 } from "../../../lib/log/format.ts";

const at = Date.UTC(2026, 10, 23, 17, 0, 0, 7);
const entry = (over: Partial<LogEntry> = {}): LogEntry => ({
  time: at,
  level: "info",
  scope: "ads",
  msg: "xds: hello",
  ...over,
});

describe("rfc3339", () => {
  it("is UTC with milliseconds", () => {
    expect(rfc3339(at)).toBe("2026-11-23T17:00:00.007Z");
  });
});

describe("formatText", () => {
  it.each([
    ["a bare message", entry(), "2026-11-23T17:00:00.007Z\tinfo\tads\txds: hello"],
    [
      "plain fields bare, in order",
      entry({
        level: "warn",
        scope: "push",
        fields: { version: 3, full: true, reason: "config:1,endpoint:2" },
      }),
      "2026-11-23T17:00:00.007Z\twarn\tpush\txds: hello version=3 full=true reason=config:1,endpoint:2",
    ],
    [
      "a field with spaces, quotes or controls quoted and escaped",
      entry({ fields: { node: 'a b"c\nd' } }),
      '2026-11-23T17:00:00.007Z\tinfo\tads\txds: hello node="a b\\"c\\nd"',
    ],
    [
      "an empty string field quoted",
      entry({ fields: { node: "" } }),
      '2026-11-23T17:00:00.007Z\tinfo\tads\txds: hello node=""',
    ],
    [
      "a message's newline, tab, escape and line separator escaped",
      entry({ level: "error", msg: "debounce: failed\n    at x\t\u001b[31m\u2028" }),
      "2026-11-23T17:00:00.007Z\terror\tads\tdebounce: failed\\n    at x\\t\\u001b[31m\\u2028",
    ],
  ])("%s", (_, e, want) => {
    const line = formatText(e);
    expect(line).toBe(want);
    expect(line.split(/[\n\r\u2028\u2029]/)).toHaveLength(1);
  });

  it("clips a long field as logSafe does", () => {
    const line = formatText(entry({ fields: { node: "n".repeat(600) } }));
    expect(line).toContain(`node="${"n".repeat(512)}…(+88 chars)"`);
  });
});

describe("formatJson", () => {
  const forged = 'sidecar~1.2.3.4~x"}\n{"level":"error","msg":"forged\u2028\ud800';
  it.each([
    [
      "no fields",
      entry(),
      { time: "2026-11-23T17:00:00.007Z", level: "info", scope: "ads", msg: "xds: hello" },
    ],
    [
      "fields as an object",
      entry({ fields: { node: "a", streams: 2, full: false } }),
      {
        time: "2026-11-23T17:00:00.007Z",
        level: "info",
        scope: "ads",
        msg: "xds: hello",
        fields: { node: "a", streams: 2, full: false },
      },
    ],
    [
      "a node id that tries to end the line and forge another",
      entry({ msg: `xds: proxy ${forged}`, fields: { node: forged } }),
      {
        time: "2026-11-23T17:00:00.007Z",
        level: "info",
        scope: "ads",
        msg: `xds: proxy ${forged}`,
        fields: { node: forged },
      },
    ],
  ])("%s", (_, e, want) => {
    const line = formatJson(e);
    expect(line.split(/[\n\r\u2028\u2029]/)).toHaveLength(1);
    // Well-formed UTF-16 (no lone surrogate reaches the output): every collector can read it.
    expect(line).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
    expect(JSON.parse(line)).toEqual(want);
    expect(Object.keys(JSON.parse(line))).toEqual(Object.keys(want));
  });

  it("clips long field strings", () => {
    const parsed = JSON.parse(formatJson(entry({ fields: { node: "n".repeat(600) } })));
    expect(parsed.fields.node).toBe(`${"n".repeat(512)}…(+88 chars)`);
  });
});
