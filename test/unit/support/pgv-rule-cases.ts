/**
 * A passing and a failing case for every rule kind of validate.proto, on one-field messages built
 * by pgv-builders.ts (the kinds no Envoy field carries have no real message to use).
 */
import { create } from "@bufbuild/protobuf";
import { anyPack, DurationSchema, TimestampSchema } from "@bufbuild/protobuf/wkt";
import { StringMatcherSchema } from "../../../lib/gen/envoy/type/matcher/v3/string_pb.ts";
import { type FieldSpec, type MessageSpec, ruleMessage } from "./pgv-builders.ts";
import type { RuleCase } from "./pgv-envoy-cases.ts";
import { rc, rule, scalarCases, str } from "./pgv-scalar-cases.ts";

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
  ...scalarCases,
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
