/**
 * The rule kinds of validate.proto: which ones Envoy's generated messages set (read from their
 * descriptors) and which ones this checker implements, so a kind Envoy uses and we do not check
 * fails test/unit/support/pgv-kinds.test.ts by name. A kind is `<rules>.<field>` as in
 * validate.proto (`string.min_len`, `repeated.items`, `message.required`), plus `oneof.required`,
 * `message.disabled` and `message.ignored`; rules nested in items/keys/values count as their own kinds.
 */
import { type DescMessage, getOption, hasOption, type Message } from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import {
  disabled,
  type FieldRules,
  FieldRulesSchema,
  ignored,
  required,
} from "../../../lib/gen/validate/validate_pb.ts";
import { numericTypes } from "./numbers.ts";
import { fieldRules } from "./walk.ts";

const numericKinds = ["const", "lt", "lte", "gt", "gte", "in", "not_in", "ignore_empty"];

/** Every rule kind walk.ts and its helpers check (each has a passing and a failing case in pgv.test.ts). */
export const implementedRuleKinds: readonly string[] = [
  ...numericTypes.flatMap((t) => numericKinds.map((k) => `${t}.${k}`)),
  "bool.const",
  ...[
    "const",
    "len",
    "min_len",
    "max_len",
    "len_bytes",
    "min_bytes",
    "max_bytes",
    "pattern",
    "prefix",
    "suffix",
    "contains",
    "not_contains",
    "in",
    "not_in",
    "email",
    "hostname",
    "ip",
    "ipv4",
    "ipv6",
    "uri",
    "uri_ref",
    "address",
    "uuid",
    "well_known_regex",
    "strict",
    "ignore_empty",
  ].map((k) => `string.${k}`),
  ...[
    "const",
    "len",
    "min_len",
    "max_len",
    "pattern",
    "prefix",
    "suffix",
    "contains",
    "in",
    "not_in",
    "ip",
    "ipv4",
    "ipv6",
    "ignore_empty",
  ].map((k) => `bytes.${k}`),
  ...["const", "defined_only", "in", "not_in"].map((k) => `enum.${k}`),
  "message.skip",
  "message.required",
  ...["min_items", "max_items", "unique", "items", "ignore_empty"].map((k) => `repeated.${k}`),
  ...["min_pairs", "max_pairs", "no_sparse", "keys", "values", "ignore_empty"].map((k) => `map.${k}`),
  ...["required", "in", "not_in"].map((k) => `any.${k}`),
  ...["required", "const", "lt", "lte", "gt", "gte", "in", "not_in"].map((k) => `duration.${k}`),
  ...["required", "const", "lt", "lte", "gt", "gte", "lt_now", "gt_now", "within"].map(
    (k) => `timestamp.${k}`,
  ),
  "oneof.required",
  "message.disabled",
  "message.ignored",
];

/** The kinds one FieldRules sets, nested items/keys/values included. */
export function kindsOf(rule: FieldRules): string[] {
  const out: string[] = [];
  const top = reflect(FieldRulesSchema, rule);
  for (const f of FieldRulesSchema.fields) {
    if (!top.isSet(f)) continue;
    const sub = top.get(f) as { desc: DescMessage; isSet(x: unknown): boolean; get(x: unknown): unknown };
    for (const g of sub.desc.fields) {
      if (!sub.isSet(g)) continue;
      out.push(`${f.name}.${g.name}`);
      if (g.message?.typeName === FieldRulesSchema.typeName)
        out.push(...kindsOf((sub.get(g) as { message: Message }).message as FieldRules));
    }
  }
  return out;
}

/** Rule kind ─▶ the fields (or messages, oneofs) that use it, over `messages`. */
export function ruleKindsUsed(messages: Iterable<DescMessage>): Map<string, string[]> {
  const used = new Map<string, string[]>();
  const add = (kind: string, where: string) => used.set(kind, [...(used.get(kind) ?? []), where]);
  for (const m of messages) {
    if (hasOption(m, disabled) && getOption(m, disabled)) add("message.disabled", m.typeName);
    if (hasOption(m, ignored) && getOption(m, ignored)) add("message.ignored", m.typeName);
    for (const o of m.oneofs)
      if (hasOption(o, required) && getOption(o, required)) add("oneof.required", `${m.typeName}.${o.name}`);
    for (const f of m.fields) {
      const r = fieldRules(f);
      if (r) for (const k of kindsOf(r)) add(k, `${m.typeName}.${f.name}`);
    }
  }
  return used;
}
