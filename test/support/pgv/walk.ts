/**
 * The walk of one message against the `validate.rules` its descriptors carry, as
 * protoc-gen-validate's generated Validate does (bufbuild/protoc-gen-validate
 * templates/goshared/msg.go, message.go, templates/cc/msg.go): every field's rules; a oneof
 * member's only when it is the case set; implicit-presence scalars checked even at their zero
 * value, explicit-presence ones only when set; message fields recursed into unless `skip`, and
 * `required` when unset; messages marked `(validate.disabled)` or `(validate.ignored)` not checked.
 * Unlike PGV (which leaves Any opaque) an Any is unpacked and checked too, as Envoy validates a
 * typed_config when it loads it (MessageUtil::anyConvertAndValidate).
 */
import {
  type DescEnum,
  type DescField,
  type DescMessage,
  type DescOneof,
  getOption,
  hasOption,
  type Registry,
} from "@bufbuild/protobuf";
import type { ReflectList, ReflectMap, ReflectMessage } from "@bufbuild/protobuf/reflect";
import { reflect } from "@bufbuild/protobuf/reflect";
import { type Any, anyUnpack } from "@bufbuild/protobuf/wkt";
import {
  disabled,
  type FieldRules,
  ignored,
  required,
  rules,
} from "../../../lib/gen/validate/validate_pb.ts";
import { checkMap, checkRepeated } from "./collections.ts";
import { checkBool, checkEnum, checkNumber, numericTypes } from "./numbers.ts";
import { own, type PathLike, raw, type Sink, subPath } from "./shared.ts";
import { checkBytes, checkString } from "./strings.ts";
import { checkAnyRules, checkDuration, checkTimestamp, isWkt, isWrapper } from "./wkt.ts";

/** What a walk needs: the registry Any is unpacked with, the clock of lt_now/gt_now/within, the sink. */
export interface WalkContext {
  registry: Registry;
  nowNanos: bigint;
  sink: Sink;
}

type Seconds = { seconds: bigint; nanos: number };
const numeric: ReadonlySet<string> = new Set(numericTypes);

/** The field's `(validate.rules)`, if it has any. */
export function fieldRules(f: DescField): FieldRules | undefined {
  return hasOption(f, rules) ? getOption(f, rules) : undefined;
}

/** What one message type's options say, read once per type (getOption decodes the options each call). */
interface Plan {
  off: boolean;
  requiredOneofs: DescOneof[];
  /** Only the fields that can hold a violation: with rules, or of a message type that can. */
  fields: { f: DescField; rule: FieldRules | undefined; seg: string }[];
  /** Whether any value of this type can break a rule (an Any always can: its contents are checked). */
  mayViolate: boolean;
}
const plans = new WeakMap<DescMessage, Plan>();

function planOf(d: DescMessage): Plan {
  let p = plans.get(d);
  if (p) return p;
  const off =
    (hasOption(d, disabled) && getOption(d, disabled)) || (hasOption(d, ignored) && getOption(d, ignored));
  // Registered before its fields are planned, so a recursive type sees itself as "may violate".
  p = { off, requiredOneofs: [], fields: [], mayViolate: true };
  plans.set(d, p);
  if (isWkt(d, "Any")) return p;
  p.requiredOneofs = d.oneofs.filter((o) => hasOption(o, required) && getOption(o, required));
  for (const f of d.fields) {
    const rule = fieldRules(f);
    const nested =
      f.message && !isWrapper(f.message) && !isWkt(f.message, "Duration") && !isWkt(f.message, "Timestamp");
    if (rule || (nested && planOf(f.message as DescMessage).mayViolate))
      p.fields.push({ f, rule, seg: `.${f.name}` });
  }
  p.mayViolate = !off && (p.requiredOneofs.length > 0 || p.fields.length > 0);
  return p;
}

/** Checks every field of `r` (and, through them, every nested message). */
export function walkMessage(r: ReflectMessage, path: PathLike, ctx: WalkContext) {
  if (isWkt(r.desc, "Any")) return walkAny(r, path, ctx);
  const plan = planOf(r.desc);
  if (plan.off) return;
  for (const oneof of plan.requiredOneofs)
    if (r.oneofCase(oneof) === undefined)
      ctx.sink(`${path}.${oneof.name}`, "oneof.required", raw("no case set"));
  for (const { f, rule, seg } of plan.fields) {
    if (f.oneof && r.oneofCase(f.oneof) !== f) continue;
    checkField(r, f, rule, subPath(path, seg), ctx);
  }
}

function checkField(
  r: ReflectMessage,
  f: DescField,
  rule: FieldRules | undefined,
  path: PathLike,
  ctx: WalkContext,
) {
  switch (f.fieldKind) {
    case "scalar":
    case "enum":
      // proto3 `optional` (explicit presence): PGV checks only a set value.
      if (f.presence === 1 && !f.oneof && !r.isSet(f)) return;
      return checkValue(r.get(f), rule, f.fieldKind === "enum" ? f.enum : undefined, path, ctx);
    case "message": {
      if (!r.isSet(f)) {
        const t = rule?.type;
        const wktRequired =
          (t?.case === "duration" || t?.case === "timestamp" || t?.case === "any") &&
          own(t.value, "required");
        if (own(rule?.message, "required") || wktRequired) ctx.sink(path, "message.required", raw("unset"));
        return;
      }
      return checkMessage(r.get(f) as ReflectMessage, rule, path, ctx);
    }
    case "list": {
      const list = [...(r.get(f) as ReflectList)];
      const rr = rule?.type.case === "repeated" ? rule.type.value : undefined;
      if (rr && !checkRepeated(list, rr, path, ctx.sink)) return;
      const items = rr?.items;
      for (const [i, item] of list.entries()) {
        const p = subPath(path, `[${i}]`);
        if (f.listKind === "message") checkMessage(item as ReflectMessage, items, p, ctx);
        else checkValue(item, items, f.listKind === "enum" ? f.enum : undefined, p, ctx);
      }
      return;
    }
    case "map": {
      // The plain map (reflection would fill a missing message value in), for no_sparse.
      const plain = Object.entries((r.message as Record<string, unknown>)[f.localName] as object);
      const mr = rule?.type.case === "map" ? rule.type.value : undefined;
      if (mr && !checkMap(plain, mr, path, ctx.sink)) return;
      const present = new Set(plain.filter(([, v]) => v !== undefined).map(([k]) => k));
      for (const [k, v] of (r.get(f) as ReflectMap).entries()) {
        if (!present.has(String(k))) continue;
        const p = subPath(path, `[${String(k)}]`);
        checkValue(k, mr?.keys, undefined, subPath(p, "<key>"), ctx);
        if (f.mapKind === "message") checkMessage(v as ReflectMessage, mr?.values, p, ctx);
        else checkValue(v, mr?.values, f.mapKind === "enum" ? f.enum : undefined, p, ctx);
      }
      return;
    }
  }
}

/** Scalar and enum rules on one value (a field, a list item, a map key or value, a wrapper's value). */
function checkValue(
  v: unknown,
  rule: FieldRules | undefined,
  e: DescEnum | undefined,
  path: PathLike,
  ctx: WalkContext,
) {
  const t = rule?.type;
  if (!t?.case) return;
  if (t.case === "string") return checkString(v as string, t.value, path, ctx.sink);
  if (t.case === "bytes") return checkBytes(v as Uint8Array, t.value, path, ctx.sink);
  if (t.case === "bool") return checkBool(v as boolean, t.value, path, ctx.sink);
  if (t.case === "enum") return checkEnum(e, v as number, t.value, path, ctx.sink);
  if (numeric.has(t.case)) return checkNumber(t.case, v as number | bigint, t.value, path, ctx.sink);
}

/** A set message value: wrappers take scalar rules, Duration/Timestamp/Any theirs; others are walked unless `skip`. */
function checkMessage(m: ReflectMessage, rule: FieldRules | undefined, path: PathLike, ctx: WalkContext) {
  const t = rule?.type;
  if (isWrapper(m.desc)) return checkValue(m.get(m.desc.fields[0] as DescField), rule, undefined, path, ctx);
  if (isWkt(m.desc, "Duration")) {
    if (t?.case === "duration") checkDuration(m.message as unknown as Seconds, t.value, path, ctx.sink);
    return;
  }
  if (isWkt(m.desc, "Timestamp")) {
    if (t?.case === "timestamp")
      checkTimestamp(m.message as unknown as Seconds, t.value, ctx.nowNanos, path, ctx.sink);
    return;
  }
  if (isWkt(m.desc, "Any") && t?.case === "any")
    checkAnyRules((m.message as Any).typeUrl, t.value, path, ctx.sink);
  if (own(rule?.message, "skip") || !planOf(m.desc).mayViolate) return;
  walkMessage(m, path, ctx);
}

/** An Any's contents, unpacked with the registry; a type it does not hold is a violation (nothing checks it). */
function walkAny(r: ReflectMessage, path: PathLike, ctx: WalkContext) {
  const any = r.message as Any;
  if (any.typeUrl === "") return ctx.sink(path, "any.type_url", raw("empty"));
  const inner = anyUnpack(any, ctx.registry);
  if (!inner)
    return ctx.sink(path, "any.unpack (type not in the registry of generated Envoy types)", any.typeUrl);
  const desc = ctx.registry.getMessage(inner.$typeName) as DescMessage;
  walkMessage(reflect(desc, inner), subPath(path, `<${inner.$typeName}>`), ctx);
}
