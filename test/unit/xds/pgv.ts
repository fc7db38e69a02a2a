/**
 * A checker of the protoc-gen-validate rules Envoy's protos carry (read from the generated
 * descriptors with getOption), for the rule kinds our resources can meet: required messages and
 * oneofs, numeric and duration bounds, string lengths, defined enums, repeated and map sizes. Any
 * fields are unpacked with `registry` and checked too. Returns the violations as `path: rule` lines.
 */
import {
  type DescField,
  type DescMessage,
  getOption,
  hasOption,
  type Message,
  type Registry,
} from "@bufbuild/protobuf";
import { type ReflectMessage, reflect } from "@bufbuild/protobuf/reflect";
import { type Any, AnySchema, anyUnpack } from "@bufbuild/protobuf/wkt";
import { type FieldRules, required, rules } from "../../../lib/gen/validate/validate_pb.ts";

type Num = number | bigint;

/** A proto2 rule field as set (protobuf-es keeps unset proto2 fields' defaults on the prototype). */
function own<T extends object, K extends keyof T>(o: T | undefined, k: K): T[K] | undefined {
  return o !== undefined && Object.hasOwn(o, k) ? o[k] : undefined;
}
interface Bounds {
  const?: Num;
  lt?: Num;
  lte?: Num;
  gt?: Num;
  gte?: Num;
  in?: Num[];
  notIn?: Num[];
}

/** Every PGV violation in `msg` and what it holds. */
export function pgvViolations(schema: DescMessage, msg: Message, registry: Registry): string[] {
  const out: string[] = [];
  walk(reflect(schema, msg), schema.typeName, registry, out);
  return out;
}

function walk(r: ReflectMessage, path: string, registry: Registry, out: string[]): void {
  if (r.desc.typeName === AnySchema.typeName) {
    const inner = anyUnpack(r.message as Any, registry);
    if (!inner) out.push(`${path}: Any of unknown type ${(r.message as Any).typeUrl}`);
    else
      walk(
        reflect(registry.getMessage(inner.$typeName) as DescMessage, inner),
        `${path}<${inner.$typeName}>`,
        registry,
        out,
      );
    return;
  }
  for (const oneof of r.desc.oneofs) {
    if (hasOption(oneof, required) && getOption(oneof, required) && r.oneofCase(oneof) === undefined)
      out.push(`${path}.${oneof.name}: oneof required`);
  }
  for (const f of r.desc.fields) {
    const p = `${path}.${f.name}`;
    const rule = hasOption(f, rules) ? getOption(f, rules) : undefined;
    if (!r.isSet(f)) {
      if (f.oneof) continue; // a oneof member's rules apply only when it is the case set
      if (f.fieldKind === "message" && rule?.message?.required) out.push(`${p}: required`);
      if (rule?.type.case === "duration" && own(rule.type.value, "required")) out.push(`${p}: required`);
      continue;
    }
    const v = r.get(f);
    if (f.fieldKind === "list") {
      const list = v as { size: number; [Symbol.iterator](): Iterator<unknown> };
      if (rule?.type.case === "repeated") {
        const rr = rule.type.value;
        const min = own(rr, "minItems");
        const max = own(rr, "maxItems");
        if (min !== undefined && BigInt(list.size) < min) out.push(`${p}: min_items ${min}`);
        if (max !== undefined && BigInt(list.size) > max) out.push(`${p}: max_items ${max}`);
      }
      let i = 0;
      for (const item of list) {
        if (f.listKind === "message") walk(item as ReflectMessage, `${p}[${i}]`, registry, out);
        else
          checkScalar(
            f,
            item,
            rule?.type.case === "repeated" ? rule.type.value.items : undefined,
            `${p}[${i}]`,
            out,
          );
        i++;
      }
      continue;
    }
    if (f.fieldKind === "map") {
      const map = v as { size: number; entries(): Iterable<[unknown, unknown]> };
      const minPairs = rule?.type.case === "map" ? own(rule.type.value, "minPairs") : undefined;
      if (minPairs !== undefined && BigInt(map.size) < minPairs) out.push(`${p}: min_pairs ${minPairs}`);
      if (f.mapKind === "message")
        for (const [k, item] of map.entries())
          walk(item as ReflectMessage, `${p}[${String(k)}]`, registry, out);
      continue;
    }
    if (f.fieldKind === "message") {
      const m = v as ReflectMessage;
      if (isWrapper(m.desc)) checkScalar(f, m.get(m.desc.fields[0] as DescField), rule, p, out);
      else if (rule?.type.case === "duration")
        checkBounds(durationNanos(m.message), nanosBounds(rule.type.value), p, out);
      else walk(m, p, registry, out);
      continue;
    }
    checkScalar(f, v, rule, p, out);
  }
}

function checkScalar(f: DescField, v: unknown, rule: FieldRules | undefined, p: string, out: string[]): void {
  if (!rule) return;
  const t = rule.type;
  switch (t.case) {
    case "string": {
      const s = v as string;
      const min = own(t.value, "minLen");
      const max = own(t.value, "maxLen");
      const minBytes = own(t.value, "minBytes");
      if (min !== undefined && BigInt(s.length) < min) out.push(`${p}: min_len ${min}`);
      if (max !== undefined && BigInt(s.length) > max) out.push(`${p}: max_len ${max}`);
      if (minBytes !== undefined && BigInt(Buffer.byteLength(s)) < minBytes)
        out.push(`${p}: min_bytes ${minBytes}`);
      return;
    }
    case "enum": {
      const e = f.enum;
      if (own(t.value, "definedOnly") && e && !e.values.some((x) => x.number === v))
        out.push(`${p}: enum value ${v} undefined`);
      return;
    }
    case "float":
    case "double":
    case "int32":
    case "int64":
    case "uint32":
    case "uint64":
    case "sint32":
    case "sint64":
    case "fixed32":
    case "fixed64":
    case "sfixed32":
    case "sfixed64":
      checkBounds(v as Num, bounds(t.value as Bounds), p, out);
      return;
    default:
      return;
  }
}

function bounds(b: Bounds): Bounds {
  return {
    const: own(b, "const"),
    lt: own(b, "lt"),
    lte: own(b, "lte"),
    gt: own(b, "gt"),
    gte: own(b, "gte"),
    in: b.in,
    notIn: b.notIn,
  };
}

function checkBounds(v: Num, b: Bounds, p: string, out: string[]): void {
  const n = Number(v);
  if (b.const !== undefined && n !== Number(b.const)) out.push(`${p}: const ${b.const}`);
  if (b.lt !== undefined && !(n < Number(b.lt))) out.push(`${p}: ${n} not < ${b.lt}`);
  if (b.lte !== undefined && !(n <= Number(b.lte))) out.push(`${p}: ${n} not <= ${b.lte}`);
  if (b.gt !== undefined && !(n > Number(b.gt))) out.push(`${p}: ${n} not > ${b.gt}`);
  if (b.gte !== undefined && !(n >= Number(b.gte))) out.push(`${p}: ${n} not >= ${b.gte}`);
  if (b.in && b.in.length > 0 && !b.in.some((x) => Number(x) === n)) out.push(`${p}: not in ${b.in}`);
  if (b.notIn?.some((x) => Number(x) === n)) out.push(`${p}: in not_in`);
}

type DurationLike = { seconds: bigint; nanos: number };
function durationNanos(d: unknown): bigint {
  const x = d as DurationLike;
  return x.seconds * 1_000_000_000n + BigInt(x.nanos);
}
function nanosBounds(r: {
  lt?: DurationLike;
  lte?: DurationLike;
  gt?: DurationLike;
  gte?: DurationLike;
}): Bounds {
  const n = (d: DurationLike | undefined) => (d ? durationNanos(d) : undefined);
  return { lt: n(r.lt), lte: n(r.lte), gt: n(r.gt), gte: n(r.gte) };
}

function isWrapper(d: DescMessage): boolean {
  return d.typeName.startsWith("google.protobuf.") && d.typeName.endsWith("Value") && d.fields.length === 1;
}
