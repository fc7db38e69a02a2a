import { numericTypes } from "../../support/pgv/numbers.ts";
import { type FieldSpec, ruleMessage } from "./pgv-builders.ts";
import type { RuleCase } from "./pgv-envoy-cases.ts";

const wide = new Set(["int64", "uint64", "sint64", "fixed64", "sfixed64"]);

export function rc(
  kind: string,
  spec: FieldSpec,
  pass: unknown,
  fail: unknown,
  says: string,
  more: Partial<RuleCase> = {},
): RuleCase {
  return { kind, schema: ruleMessage(spec), pass: { v: pass }, fail: { v: fail }, says, ...more };
}
export const rule = (type: string, value: Record<string, unknown>) =>
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

const byt = (r: Record<string, unknown>): FieldSpec => ({ type: "bytes", rules: rule("bytes", r) });
const b = (s: string) => new TextEncoder().encode(s);

/** Every scalar rule kind, each with a passing and a failing value. */
export const str = (r: Record<string, unknown>): FieldSpec => ({ type: "string", rules: rule("string", r) });

export const scalarCases: RuleCase[] = [
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
];
