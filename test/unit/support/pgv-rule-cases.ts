/**
 * A passing and a failing case for every rule kind of validate.proto, on one-field messages built
 * by pgv-builders.ts (the kinds no Envoy field carries have no real message to use).
 */
import { create } from "@bufbuild/protobuf";
import { anyPack, DurationSchema, TimestampSchema } from "@bufbuild/protobuf/wkt";
import { StringMatcherSchema } from "../../../lib/gen/envoy/type/matcher/v3/string_pb.ts";
import { type FieldSpec, type MessageSpec, ruleMessage } from "./pgv-builders.ts";
import type { RuleCase } from "./pgv-envoy-cases.ts";

const numericTypes = [
  "float",
  "double",
  "int32",
  "int64",
  "uint32",
  "uint64",
  "sint32",
  "sint64",
  "fixed32",
  "fixed64",
  "sfixed32",
  "sfixed64",
] as const;
const wide = new Set(["int64", "uint64", "sint64", "fixed64", "sfixed64"]);

function rc(
  kind: string,
  spec: FieldSpec,
  pass: unknown,
  fail: unknown,
  says: string,
  more: Partial<RuleCase> = {},
): RuleCase {
  return { kind, schema: ruleMessage(spec), pass: { v: pass }, fail: { v: fail }, says, ...more };
}
const rule = (type: string, value: Record<string, unknown>) =>
  ({ type: { case: type, value } }) as FieldSpec["rules"];

function numeric(): RuleCase[] {
  return numericTypes.flatMap((t) => {
    const n = (x: number) => (wide.has(t) ? BigInt(x) : x);
    const s = (r: Record<string, unknown>): FieldSpec => ({ type: t, rules: rule(t, r) });
    return [
      rc(`${t}.const`, s({ const: n(5) }), n(5), n(6), `v: ${t}.const 5 (6)`),
      rc(`${t}.lt`, s({ lt: n(10) }), n(9), n(10), `v: ${t}.lt 10 (10)`),
      rc(`${t}.lte`, s({ lte: n(10) }), n(10), n(11), `v: ${t}.lte 10 (11)`),
      rc(`${t}.gt`, s({ gt: n(10) }), n(11), n(10), `v: ${t}.gt 10 (10)`),
      rc(`${t}.gte`, s({ gte: n(10) }), n(10), n(9), `v: ${t}.gte 10 (9)`),
      rc(`${t}.in`, s({ in: [n(1), n(2)] }), n(2), n(3), `v: ${t}.in [1, 2] (3)`),
      rc(`${t}.not_in`, s({ notIn: [n(3)] }), n(2), n(3), `v: ${t}.not_in [3] (3)`),
      rc(`${t}.ignore_empty`, s({ gt: n(10), ignoreEmpty: true }), n(0), n(5), `v: ${t}.gt 10 (5)`),
      // ltgt.go: lower bound above the upper one ─▶ the value must lie outside [lt, gt].
      rc(`${t}.lt`, s({ lt: n(5), gt: n(10) }), n(11), n(7), `v: ${t}.outside [5, 10] (7)`),
      rc(`${t}.gte`, s({ gte: n(5), lte: n(10) }), n(5), n(11), `v: ${t}.in [5, 10] (11)`),
    ];
  });
}

const str = (r: Record<string, unknown>): FieldSpec => ({ type: "string", rules: rule("string", r) });
const byt = (r: Record<string, unknown>): FieldSpec => ({ type: "bytes", rules: rule("bytes", r) });
const b = (s: string) => new TextEncoder().encode(s);
const dur = (seconds: number, nanos = 0) => create(DurationSchema, { seconds: BigInt(seconds), nanos });
const ts = (seconds: number) => create(TimestampSchema, { seconds: BigInt(seconds) });
const NOW = 1_700_000_000_000;
const durSpec = (r: Record<string, unknown>): FieldSpec => ({
  type: "message",
  message: "google.protobuf.Duration",
  rules: rule("duration", r),
});
const tsSpec = (r: Record<string, unknown>): FieldSpec => ({
  type: "message",
  message: "google.protobuf.Timestamp",
  rules: rule("timestamp", r),
});
const anySpec = (r: Record<string, unknown>): FieldSpec => ({
  type: "message",
  message: "google.protobuf.Any",
  rules: rule("any", r),
});
const matcher = (prefix: string) =>
  anyPack(
    StringMatcherSchema,
    create(StringMatcherSchema, { matchPattern: { case: "prefix", value: prefix } }),
  );
const SM = "type.googleapis.com/envoy.type.matcher.v3.StringMatcher";

function shaped(
  kind: string,
  spec: FieldSpec,
  shape: MessageSpec,
  pass: unknown,
  says: string,
  failSpec = spec,
): RuleCase {
  // The same invalid value passes where the shape turns checking off and fails where it does not.
  return {
    kind,
    schema: ruleMessage(spec, shape),
    failSchema: ruleMessage(failSpec),
    pass: { v: pass },
    fail: { v: pass },
    says,
  };
}

/** Every implemented kind, each with a passing and a failing value. */
export const ruleCases: RuleCase[] = [
  ...numeric(),
  rc(
    "bool.const",
    { type: "bool", rules: rule("bool", { const: true }) },
    true,
    false,
    "v: bool.const true (false)",
  ),
  rc("string.const", str({ const: "a" }), "a", "b", 'v: string.const "a" ("b")'),
  rc("string.len", str({ len: 5n }), "héllo", "hello!", "v: string.len 5"),
  rc("string.min_len", str({ minLen: 2n }), "é€", "€", "v: string.min_len 2"),
  rc("string.max_len", str({ maxLen: 2n }), "é€", "abc", "v: string.max_len 2"),
  rc("string.len_bytes", str({ lenBytes: 2n }), "é", "e", "v: string.len_bytes 2"),
  rc("string.min_bytes", str({ minBytes: 2n }), "é", "e", "v: string.min_bytes 2"),
  rc("string.max_bytes", str({ maxBytes: 2n }), "ab", "é€", "v: string.max_bytes 2"),
  rc("string.pattern", str({ pattern: "[[:digit:]]+\\Q.\\E\\pL" }), "12.x", "12-x", "v: string.pattern"),
  rc("string.pattern", str({ pattern: "(?i)ab" }), "AB", "xAB", "v: string.pattern"),
  rc("string.prefix", str({ prefix: "/a" }), "/ab", "/b", 'v: string.prefix "/a"'),
  rc("string.suffix", str({ suffix: ".com" }), "x.com", "x.org", 'v: string.suffix ".com"'),
  rc("string.contains", str({ contains: "@" }), "a@b", "ab", 'v: string.contains "@"'),
  rc("string.not_contains", str({ notContains: ".." }), "a.b", "a..b", 'v: string.not_contains ".."'),
  rc("string.in", str({ in: ["http", "https"] }), "http", "ftp", 'v: string.in ["http", "https"]'),
  rc("string.not_in", str({ notIn: ["CONNECT"] }), "GET", "CONNECT", "v: string.not_in"),
  rc(
    "string.email",
    str({ wellKnown: { case: "email", value: true } }),
    "Bob <bob@example.com>",
    "bob@-bad.com",
    "v: string.email",
  ),
  rc(
    "string.hostname",
    str({ wellKnown: { case: "hostname", value: true } }),
    "reviews.default.svc.cluster.local.",
    "a_b.com",
    "v: string.hostname",
  ),
  rc("string.ip", str({ wellKnown: { case: "ip", value: true } }), "::1", "1.2.3", "v: string.ip"),
  rc(
    "string.ipv4",
    str({ wellKnown: { case: "ipv4", value: true } }),
    "10.0.0.1",
    "10.0.0.256",
    "v: string.ipv4",
  ),
  rc(
    "string.ipv6",
    str({ wellKnown: { case: "ipv6", value: true } }),
    "fe80::1:2",
    "::ffff:10.0.0.1",
    "v: string.ipv6",
  ),
  rc(
    "string.uri",
    str({ wellKnown: { case: "uri", value: true } }),
    "https://a/b?c",
    "/relative",
    "v: string.uri",
  ),
  rc(
    "string.uri_ref",
    str({ wellKnown: { case: "uriRef", value: true } }),
    "/relative?q=1",
    "/bad%zz",
    "v: string.uri_ref",
  ),
  rc(
    "string.address",
    str({ wellKnown: { case: "address", value: true } }),
    "10.0.0.1",
    "-bad-",
    "v: string.address",
  ),
  rc(
    "string.uuid",
    str({ wellKnown: { case: "uuid", value: true } }),
    "123e4567-e89b-12d3-a456-426614174000",
    "123e4567e89b12d3a456426614174000",
    "v: string.uuid",
  ),
  rc(
    "string.well_known_regex",
    str({ wellKnown: { case: "wellKnownRegex", value: 1 } }),
    ":authority",
    "bad header",
    "v: string.well_known_regex HTTP_HEADER_NAME",
  ),
  rc(
    "string.well_known_regex",
    str({ wellKnown: { case: "wellKnownRegex", value: 2 } }),
    "a value",
    "bell\u0007",
    "v: string.well_known_regex HTTP_HEADER_VALUE",
  ),
  rc(
    "string.strict",
    str({ wellKnown: { case: "wellKnownRegex", value: 1 }, strict: false }),
    "not a token",
    "nul\u0000",
    "v: string.well_known_regex HTTP_HEADER_NAME (strict: false)",
  ),
  rc("string.ignore_empty", str({ minLen: 3n, ignoreEmpty: true }), "", "ab", "v: string.min_len 3"),
  rc("bytes.const", byt({ const: b("ab") }), b("ab"), b("ac"), "v: bytes.const 0x6162"),
  rc("bytes.len", byt({ len: 2n }), b("ab"), b("a"), "v: bytes.len 2"),
  rc("bytes.min_len", byt({ minLen: 2n }), b("ab"), b("a"), "v: bytes.min_len 2"),
  rc("bytes.max_len", byt({ maxLen: 2n }), b("ab"), b("abc"), "v: bytes.max_len 2"),
  rc("bytes.pattern", byt({ pattern: "^[a-z]+$" }), b("abc"), b("ab1"), "v: bytes.pattern"),
  rc("bytes.prefix", byt({ prefix: b("\x01") }), b("\x01a"), b("a"), "v: bytes.prefix 0x01"),
  rc("bytes.suffix", byt({ suffix: b("z") }), b("az"), b("za"), "v: bytes.suffix 0x7a"),
  rc("bytes.contains", byt({ contains: b("bc") }), b("abcd"), b("acbd"), "v: bytes.contains 0x6263"),
  rc("bytes.in", byt({ in: [b("a"), b("b")] }), b("b"), b("c"), "v: bytes.in [0x61, 0x62]"),
  rc("bytes.not_in", byt({ notIn: [b("c")] }), b("b"), b("c"), "v: bytes.not_in [0x63]"),
  rc(
    "bytes.ip",
    byt({ wellKnown: { case: "ip", value: true } }),
    new Uint8Array(16),
    new Uint8Array(5),
    "v: bytes.ip",
  ),
  rc(
    "bytes.ipv4",
    byt({ wellKnown: { case: "ipv4", value: true } }),
    new Uint8Array(4),
    new Uint8Array(16),
    "v: bytes.ipv4",
  ),
  rc(
    "bytes.ipv6",
    byt({ wellKnown: { case: "ipv6", value: true } }),
    new Uint8Array(16),
    new Uint8Array(4),
    "v: bytes.ipv6",
  ),
  rc(
    "bytes.ignore_empty",
    byt({ minLen: 2n, ignoreEmpty: true }),
    new Uint8Array(0),
    b("a"),
    "v: bytes.min_len 2",
  ),
  rc("enum.const", { type: "enum", rules: rule("enum", { const: 1 }) }, 1, 2, "v: enum.const 1 (2)"),
  rc(
    "enum.defined_only",
    { type: "enum", rules: rule("enum", { definedOnly: true }) },
    2,
    7,
    "v: enum.defined_only pgvt",
  ),
  rc("enum.in", { type: "enum", rules: rule("enum", { in: [0, 1] }) }, 1, 2, "v: enum.in [0, 1] (2)"),
  rc("enum.not_in", { type: "enum", rules: rule("enum", { notIn: [2] }) }, 1, 2, "v: enum.not_in [2] (2)"),
  rc(
    "message.required",
    { type: "message", message: "google.protobuf.Duration", rules: { message: { required: true } } },
    dur(0),
    undefined,
    "v: message.required (unset)",
  ),
  shaped(
    "message.skip",
    { type: "message", message: "google.protobuf.Any", rules: { message: { skip: true } } },
    {},
    matcher(""),
    "v<envoy.type.matcher.v3.StringMatcher>.prefix: string.min_len 1",
    { type: "message", message: "google.protobuf.Any" },
  ),
  shaped("message.disabled", str({ minLen: 1n }), { disabled: true }, "", "v: string.min_len 1"),
  shaped("message.ignored", str({ minLen: 1n }), { ignored: true }, "", "v: string.min_len 1"),
  {
    kind: "oneof.required",
    schema: ruleMessage(undefined, { requiredOneof: true }),
    pass: { o: { case: "b", value: 0 } },
    fail: {},
    says: ".o: oneof.required (no case set)",
  },
  rc(
    "repeated.min_items",
    { type: "string", repeated: true, rules: rule("repeated", { minItems: 1n }) },
    ["a"],
    [],
    "v: repeated.min_items 1 (0 items)",
  ),
  rc(
    "repeated.max_items",
    { type: "string", repeated: true, rules: rule("repeated", { maxItems: 1n }) },
    ["a"],
    ["a", "b"],
    "v: repeated.max_items 1 (2 items)",
  ),
  rc(
    "repeated.unique",
    { type: "int64", repeated: true, rules: rule("repeated", { unique: true }) },
    [1n, 2n],
    [1n, 1n],
    "v[1]: repeated.unique (1)",
  ),
  rc(
    "repeated.items",
    {
      type: "string",
      repeated: true,
      rules: rule("repeated", { items: { type: { case: "string", value: { minLen: 1n } } } }),
    },
    ["a"],
    ["a", ""],
    'v[1]: string.min_len 1 ("")',
  ),
  rc(
    "repeated.ignore_empty",
    { type: "string", repeated: true, rules: rule("repeated", { minItems: 2n, ignoreEmpty: true }) },
    [],
    ["a"],
    "v: repeated.min_items 2",
  ),
  rc(
    "map.min_pairs",
    { type: "int32", mapKey: "string", rules: rule("map", { minPairs: 1n }) },
    { a: 1 },
    {},
    "v: map.min_pairs 1 (0 pairs)",
  ),
  rc(
    "map.max_pairs",
    { type: "int32", mapKey: "string", rules: rule("map", { maxPairs: 1n }) },
    { a: 1 },
    { a: 1, b: 2 },
    "v: map.max_pairs 1 (2 pairs)",
  ),
  rc(
    "map.keys",
    {
      type: "int32",
      mapKey: "string",
      rules: rule("map", { keys: { type: { case: "string", value: { prefix: "x-" } } } }),
    },
    { "x-a": 1 },
    { a: 1 },
    'v[a]<key>: string.prefix "x-"',
  ),
  rc(
    "map.values",
    {
      type: "int32",
      mapKey: "int32",
      rules: rule("map", { values: { type: { case: "int32", value: { gt: 0 } } } }),
    },
    { 1: 1 },
    { 1: 0 },
    "v[1]: int32.gt 0 (0)",
  ),
  rc(
    "map.ignore_empty",
    { type: "int32", mapKey: "string", rules: rule("map", { minPairs: 2n, ignoreEmpty: true }) },
    {},
    { a: 1 },
    "v: map.min_pairs 2",
  ),
  // protobuf-es always decodes a value; an entry left undefined in memory is the sparse case.
  rc(
    "map.no_sparse",
    {
      type: "message",
      message: "google.protobuf.Duration",
      mapKey: "string",
      rules: rule("map", { noSparse: true }),
    },
    { a: dur(1) },
    { a: undefined },
    "v[a]: map.no_sparse (unset)",
  ),
  rc("any.required", anySpec({ required: true }), matcher("/"), undefined, "v: message.required (unset)"),
  rc("any.in", anySpec({ in: [SM] }), matcher("/"), anyPack(DurationSchema, dur(1)), "v: any.in"),
  rc("any.not_in", anySpec({ notIn: [SM] }), anyPack(DurationSchema, dur(1)), matcher("/"), "v: any.not_in"),
  rc("duration.required", durSpec({ required: true }), dur(0), undefined, "v: message.required (unset)"),
  rc(
    "duration.const",
    durSpec({ const: dur(1, 500_000_000) }),
    dur(1, 500_000_000),
    dur(1),
    "v: duration.const 1.5s (1s)",
  ),
  rc("duration.lt", durSpec({ lt: dur(1) }), dur(0, 999_999_999), dur(1), "v: duration.lt 1s (1s)"),
  rc("duration.lte", durSpec({ lte: dur(1) }), dur(1), dur(1, 1), "v: duration.lte 1s (1.000000001s)"),
  rc("duration.gt", durSpec({ gt: dur(0) }), dur(0, 1), dur(0), "v: duration.gt 0s (0s)"),
  rc(
    "duration.gte",
    durSpec({ gte: dur(0, 1_000_000) }),
    dur(0, 1_000_000),
    dur(0, 999_999),
    "v: duration.gte 0.001s (0.000999999s)",
  ),
  rc("duration.in", durSpec({ in: [dur(1), dur(2)] }), dur(2), dur(3), "v: duration.in [1s, 2s] (3s)"),
  rc("duration.not_in", durSpec({ notIn: [dur(0)] }), dur(1), dur(0), "v: duration.not_in [0s] (0s)"),
  rc("duration.gt", durSpec({ gt: dur(-5) }), dur(1), dur(1, -1), "v: duration.valid"),
  rc("timestamp.required", tsSpec({ required: true }), ts(0), undefined, "v: message.required (unset)"),
  rc(
    "timestamp.const",
    tsSpec({ const: ts(10) }),
    ts(10),
    ts(11),
    "v: timestamp.const 1970-01-01T00:00:10.000Z",
  ),
  rc("timestamp.lt", tsSpec({ lt: ts(10) }), ts(9), ts(10), "v: timestamp.lt"),
  rc("timestamp.lte", tsSpec({ lte: ts(10) }), ts(10), ts(11), "v: timestamp.lte"),
  rc("timestamp.gt", tsSpec({ gt: ts(10) }), ts(11), ts(10), "v: timestamp.gt"),
  rc("timestamp.gte", tsSpec({ gte: ts(10) }), ts(10), ts(9), "v: timestamp.gte"),
  rc("timestamp.lt_now", tsSpec({ ltNow: true }), ts(NOW / 1000 - 1), ts(NOW / 1000), "v: timestamp.lt_now", {
    now: NOW,
  }),
  rc("timestamp.gt_now", tsSpec({ gtNow: true }), ts(NOW / 1000 + 1), ts(NOW / 1000), "v: timestamp.gt_now", {
    now: NOW,
  }),
  rc(
    "timestamp.within",
    tsSpec({ within: dur(60) }),
    ts(NOW / 1000 - 60),
    ts(NOW / 1000 + 61),
    "v: timestamp.within 60s",
    { now: NOW },
  ),
];
