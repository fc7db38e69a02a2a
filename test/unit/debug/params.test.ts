import { describe, expect, it } from "vitest";
import { parseProxyStatusArgs } from "../../../lib/debug/cli-options.ts";
import { parseParams } from "../../../lib/debug/params.ts";

const specs = {
  limit: { kind: "limit", default: 10, max: 50 },
  cursor: { kind: "string", maxChars: 8 },
  before: { kind: "int", min: 1 },
  brief: { kind: "flag" },
} as const;

describe("parseParams", () => {
  it.each<{ q: Record<string, string[]>; want: unknown }>([
    { q: {}, want: { limit: 10, cursor: undefined, before: undefined, brief: false } },
    {
      q: { limit: ["50"], cursor: ["abc"], before: ["3"], brief: [""], pretty: [""] },
      want: { limit: 50, cursor: "abc", before: 3, brief: true },
    },
  ])("accepts $q", ({ q, want }) => {
    expect(parseParams(q, specs)).toEqual({ ok: true, value: want });
  });

  it.each<{ q: Record<string, string[]>; error: string }>([
    { q: { limit: ["0"] }, error: "query parameter limit must be 1 to 50, got 0" },
    { q: { limit: ["51"] }, error: "query parameter limit must be 1 to 50, got 51" },
    { q: { limit: ["-1"] }, error: 'query parameter limit must be a whole number, got "-1"' },
    { q: { limit: ["1e3"] }, error: 'query parameter limit must be a whole number, got "1e3"' },
    { q: { before: ["0"] }, error: "query parameter before must be at least 1, got 0" },
    { q: { cursor: ["123456789"] }, error: "query parameter cursor is 9 characters; at most 8 are accepted" },
    { q: { cursor: [""] }, error: "query parameter cursor is empty" },
    { q: { cursor: ["a", "b"] }, error: "query parameter cursor is given 2 times; give it once" },
    {
      q: { nope: ["1"] },
      error: 'unknown query parameter "nope"; this path takes pretty, limit, cursor, before, brief',
    },
  ])("refuses $q", ({ q, error }) => {
    expect(parseParams(q, specs)).toEqual({ ok: false, error });
  });
});

describe("parseProxyStatusArgs", () => {
  it.each([
    { argv: [], env: {}, want: { url: "http://127.0.0.1:8080" } },
    {
      argv: ["--url", "https://cp.example/", "sidecar~x"],
      env: { EDGEPILOT_XDS_TOKEN: "t" },
      want: { url: "https://cp.example", token: "t", proxyID: "sidecar~x" },
    },
    {
      argv: ["--token-file=/t"],
      env: { EDGEPILOT_URL: "http://h:1" },
      want: { url: "http://h:1", tokenFile: "/t" },
    },
  ])("$argv", ({ argv, env, want }) => {
    expect(parseProxyStatusArgs(argv, env)).toEqual({ ok: true, options: want });
  });

  it.each([
    { argv: ["--help"], want: { ok: "help" } },
    {
      argv: ["--url", "ftp://x"],
      want: { ok: false, errors: ['--url must be an http:// or https:// URL, got "ftp://x"'] },
    },
    { argv: ["a", "b"], want: { ok: false, errors: ["one proxyID at most, got 2"] } },
    { argv: ["--nope"], want: { ok: false, errors: ['unknown flag "--nope" (see --help)'] } },
    { argv: ["--url"], want: { ok: false, errors: ["--url: needs a value"] } },
  ])("$argv", ({ argv, want }) => {
    expect(parseProxyStatusArgs(argv, {})).toEqual(want);
  });
});
