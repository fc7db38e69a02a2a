import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { describe, expect, it } from "vitest";
import { createRegistry } from "../../../lib/metrics/registry.ts";
import { escapeHelp, escapeLabelValue, formatValue } from "../../../lib/metrics/text.ts";

describe("text format 0.0.4 escaping", () => {
  it.each([
    ["plain", "plain"],
    ['a"b', 'a\\"b'],
    ["a\\b", "a\\\\b"],
    ["a\nb", "a\\nb"],
    ['\\"\n', '\\\\\\"\\n'],
    ["utf-8 é ☃", "utf-8 é ☃"],
  ])("label value %j ▶ %j", (value, escaped) => {
    expect(escapeLabelValue(value)).toBe(escaped);
  });

  it.each([
    ["plain help", "plain help"],
    ['keeps "quotes"', 'keeps "quotes"'],
    ["back\\slash", "back\\\\slash"],
    ["two\nlines", "two\\nlines"],
  ])("help %j ▶ %j", (help, escaped) => {
    expect(escapeHelp(help)).toBe(escaped);
  });

  it.each([
    [0, "0"],
    [1.5, "1.5"],
    [1e21, "1e+21"],
    [Number.POSITIVE_INFINITY, "+Inf"],
    [Number.NEGATIVE_INFINITY, "-Inf"],
    [Number.NaN, "NaN"],
  ])("value %d ▶ %s", (v, text) => {
    expect(formatValue(v)).toBe(text);
  });
});

describe("registry exposition", () => {
  it("writes HELP, TYPE and labelled counters and gauges in declaration order", async () => {
    const r = createRegistry();
    const pushes = r.counter({ name: "pilot_xds_pushes", help: "Pushes by type.", labelNames: ["type"] });
    const services = r.gauge({ name: "pilot_services", help: "Total services." });
    pushes.labels("cds").inc();
    pushes.labels("eds").inc(2);
    pushes.labels("cds").inc();
    services.labels().set(3);
    expect(await r.expose()).toBe(
      "# HELP pilot_xds_pushes Pushes by type.\n# TYPE pilot_xds_pushes counter\n" +
        'pilot_xds_pushes{type="cds"} 2\npilot_xds_pushes{type="eds"} 2\n' +
        "# HELP pilot_services Total services.\n# TYPE pilot_services gauge\npilot_services 3\n",
    );
  });

  it("writes histogram buckets cumulative with +Inf, _sum and _count", async () => {
    const r = createRegistry();
    const h = r.histogram({ name: "t_seconds", help: "T.", labelNames: ["type"], buckets: [0.1, 1] });
    const eds = h.labels("eds");
    for (const v of [0.05, 0.1, 0.5, 2]) eds.observe(v);
    expect(await r.expose()).toBe(
      "# HELP t_seconds T.\n# TYPE t_seconds histogram\n" +
        't_seconds_bucket{type="eds",le="0.1"} 2\n' +
        't_seconds_bucket{type="eds",le="1"} 3\n' +
        't_seconds_bucket{type="eds",le="+Inf"} 4\n' +
        't_seconds_sum{type="eds"} 2.65\n' +
        't_seconds_count{type="eds"} 4\n',
    );
  });

  it("round-trips through a real parser, escaped label values included", async () => {
    const r = createRegistry();
    const c = r.counter({
      name: "edgepilot_x_total",
      help: 'Help with \\ and\na "quote".',
      labelNames: ["node"],
    });
    const nasty = 'sidecar~10.0.0.1~a"b\\c\nd.ns~ns.svc.cluster.local';
    c.labels(nasty).inc(7);
    const h = r.histogram({ name: "edgepilot_h", help: "H.", buckets: [0.5] });
    h.labels().observe(0.25);
    h.labels().observe(4);
    const parsed = parsePrometheusTextFormat(await r.expose());
    expect(parsed).toEqual([
      {
        name: "edgepilot_x_total",
        help: 'Help with \\ and\na "quote".',
        type: "COUNTER",
        metrics: [{ labels: { node: nasty }, value: "7" }],
      },
      {
        name: "edgepilot_h",
        help: "H.",
        type: "HISTOGRAM",
        metrics: [{ buckets: { "0.5": "1", "+Inf": "2" }, sum: "4.25", count: "2" }],
      },
    ]);
  });

  it("runs collectors before writing, and a reset family forgets its children", async () => {
    const r = createRegistry();
    const g = r.gauge({ name: "g", help: "G.", labelNames: ["k"] });
    let round = 0;
    r.collect(async () => {
      g.reset();
      round++;
      g.labels(`v${round}`).set(round);
    });
    expect(await r.expose()).toContain('g{k="v1"} 1\n');
    const second = await r.expose();
    expect(second).toContain('g{k="v2"} 2\n');
    expect(second).not.toContain("v1");
  });

  it.each([
    ["a bad metric name", () => createRegistry().counter({ name: "1bad", help: "" }), /bad metric name/],
    [
      "a bad label name",
      () => createRegistry().counter({ name: "ok", help: "", labelNames: ["bad-name"] }),
      /bad label name/,
    ],
    [
      "a reserved label name",
      () => createRegistry().gauge({ name: "ok", help: "", labelNames: ["__x"] }),
      /bad label/,
    ],
    [
      "le on a histogram",
      () => createRegistry().histogram({ name: "ok", help: "", labelNames: ["le"], buckets: [1] }),
      /bad label/,
    ],
    [
      "buckets not ascending",
      () => createRegistry().histogram({ name: "ok", help: "", buckets: [1, 1] }),
      /ascending/,
    ],
    [
      "a name declared twice",
      () => {
        const r = createRegistry();
        r.counter({ name: "twice", help: "" });
        r.gauge({ name: "twice", help: "" });
      },
      /declared twice/,
    ],
    [
      "the wrong number of label values",
      () =>
        createRegistry()
          .counter({ name: "ok", help: "", labelNames: ["a"] })
          .labels(),
      /takes 1 label value/,
    ],
    [
      "a counter going down",
      () => createRegistry().counter({ name: "ok", help: "" }).labels().inc(-1),
      /only goes up/,
    ],
  ])("refuses %s", (_what, call, message) => {
    expect(call).toThrow(message);
  });

  it("keeps one child per label values: no string built after the first lookup", () => {
    const r = createRegistry();
    const f = r.counter({ name: "c", help: "", labelNames: ["a", "b"] });
    const child = f.labels("x", "y");
    expect(f.labels("x", "y")).toBe(child);
    expect(f.labels("x", "z")).not.toBe(child);
  });
});
