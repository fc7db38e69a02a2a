import { describe, expect, it } from "vitest";
import { classifyPost, type PostResult } from "../../../lib/relay/outcome.ts";

describe("classifyPost", () => {
  const cases: {
    name: string;
    result: PostResult;
    want: ReturnType<typeof classifyPost>["kind"];
    index?: number;
  }[] = [
    { name: "200", result: { status: 200, body: "{}" }, want: "delivered" },
    { name: "204", result: { status: 204, body: "" }, want: "delivered" },
    { name: "network error", result: { error: "ECONNREFUSED" }, want: "retry" },
    { name: "503", result: { status: 503, body: "" }, want: "retry" },
    { name: "500", result: { status: 500, body: "" }, want: "retry" },
    { name: "429", result: { status: 429, body: "" }, want: "retry" },
    { name: "408", result: { status: 408, body: "" }, want: "retry" },
    { name: "401", result: { status: 401, body: '{"error":"wrong bearer token"}' }, want: "unauthorized" },
    {
      name: "400 with index",
      result: { status: 400, body: '{"error":"x","index":4}' },
      want: "rejected",
      index: 4,
    },
    { name: "400 without index", result: { status: 400, body: '{"error":"x"}' }, want: "rejected" },
    { name: "400, body not JSON", result: { status: 400, body: "bad" }, want: "rejected" },
    { name: "400, negative index", result: { status: 400, body: '{"index":-1}' }, want: "rejected" },
    { name: "413", result: { status: 413, body: "{}" }, want: "rejected" },
    { name: "404", result: { status: 404, body: "{}" }, want: "rejected" },
  ];
  for (const c of cases) {
    it(`${c.name} ▶ ${c.want}`, () => {
      const got = classifyPost(c.result);
      expect(got.kind).toBe(c.want);
      expect("index" in got ? got.index : undefined).toBe(c.index);
    });
  }

  it("keeps the answer's body, on one line and truncated, for the log", () => {
    const got = classifyPost({ status: 503, body: `${"x".repeat(600)}\n` });
    expect(got).toMatchObject({ kind: "retry", why: `503 ${"x".repeat(500)}…` });
  });
});
