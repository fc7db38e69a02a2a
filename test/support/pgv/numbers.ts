/**
 * Numeric, bool and enum rules of protoc-gen-validate, with its semantics
 * (bufbuild/protoc-gen-validate templates/goshared/ltgt.go, const.go, in.go, enum.go): lt/lte and
 * gt/gte together form a range, and when the lower bound is above the upper one the range is
 * exclusive (the value must lie OUTSIDE it); `ignore_empty` skips a zero value.
 */
import type { DescEnum } from "@bufbuild/protobuf";
import { own, type PathLike, raw, type Sink } from "./shared.ts";

/** The twelve numeric rule types of validate.proto (FieldRules' oneof cases). */
export const numericTypes = [
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

/** A comparable numeric value: bigint for 64-bit integers and duration nanos, number otherwise. */
export type Num = number | bigint;

/** The bounds a rule message sets (unset ones undefined). */
export interface Bounds<T extends Num> {
  const?: T;
  lt?: T;
  lte?: T;
  gt?: T;
  gte?: T;
  in?: readonly T[];
  notIn?: readonly T[];
}

/** The bounds set on a proto2 rule message (Int32Rules, DurationRules after conversion, ...). */
export function boundsOf<T extends Num>(r: object): Bounds<T> {
  const b = r as Bounds<T>;
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

/** The one range rule ltgt.go derives from lt/lte/gt/gte, as text, if `v` breaks it. */
export function rangeViolation<T extends Num>(
  v: T,
  b: Bounds<T>,
  fmt: (x: T) => string = String,
): string | undefined {
  const { lt, lte, gt, gte } = b;
  const f = fmt;
  if (lt !== undefined) {
    if (gt !== undefined)
      return lt > gt
        ? v <= gt || v >= lt
          ? `in (${f(gt)}, ${f(lt)})`
          : undefined
        : v >= lt && v <= gt
          ? `outside [${f(lt)}, ${f(gt)}]`
          : undefined;
    if (gte !== undefined)
      return lt > gte
        ? v < gte || v >= lt
          ? `in [${f(gte)}, ${f(lt)})`
          : undefined
        : v >= lt && v < gte
          ? `outside [${f(lt)}, ${f(gte)})`
          : undefined;
    return v >= lt ? `lt ${f(lt)}` : undefined;
  }
  if (lte !== undefined) {
    if (gt !== undefined)
      return lte > gt
        ? v <= gt || v > lte
          ? `in (${f(gt)}, ${f(lte)}]`
          : undefined
        : v > lte && v <= gt
          ? `outside (${f(lte)}, ${f(gt)}]`
          : undefined;
    if (gte !== undefined)
      return lte > gte
        ? v < gte || v > lte
          ? `in [${f(gte)}, ${f(lte)}]`
          : undefined
        : v > lte && v < gte
          ? `outside (${f(lte)}, ${f(gte)})`
          : undefined;
    return v > lte ? `lte ${f(lte)}` : undefined;
  }
  if (gt !== undefined) return v <= gt ? `gt ${f(gt)}` : undefined;
  if (gte !== undefined) return v < gte ? `gte ${f(gte)}` : undefined;
  return undefined;
}

/** const, the range, in and not_in of one numeric value (the rule's type names each line). */
export function checkBounds<T extends Num>(
  kind: string,
  v: T,
  b: Bounds<T>,
  path: PathLike,
  sink: Sink,
  fmt: (x: T) => string = String,
): void {
  const shown = raw(fmt(v));
  if (b.const !== undefined && v !== b.const) sink(path, `${kind}.const ${fmt(b.const)}`, shown);
  const range = rangeViolation(v, b, fmt);
  if (range) sink(path, `${kind}.${range}`, shown);
  if (b.in && b.in.length > 0 && !b.in.includes(v))
    sink(path, `${kind}.in [${b.in.map(fmt).join(", ")}]`, shown);
  if (b.notIn?.includes(v)) sink(path, `${kind}.not_in [${b.notIn.map(fmt).join(", ")}]`, shown);
}

/** A numeric field's rules (any of the twelve numeric rule types); `ignore_empty` skips 0. */
export function checkNumber(kind: string, value: Num, rules: object, path: PathLike, sink: Sink): void {
  if (own(rules as { ignoreEmpty?: boolean }, "ignoreEmpty") && (value === 0 || value === 0n)) return;
  const b = boundsOf<Num>(rules);
  // 64-bit values and their rules are both bigint, 32-bit ones both number: compare like with like.
  const as: (x: Num) => Num = typeof value === "bigint" ? (x) => BigInt(x) : (x) => Number(x);
  const conv: Bounds<Num> = {
    const: b.const === undefined ? undefined : as(b.const),
    lt: b.lt === undefined ? undefined : as(b.lt),
    lte: b.lte === undefined ? undefined : as(b.lte),
    gt: b.gt === undefined ? undefined : as(b.gt),
    gte: b.gte === undefined ? undefined : as(b.gte),
    in: b.in?.map(as),
    notIn: b.notIn?.map(as),
  };
  checkBounds(kind, value, conv, path, sink);
}

/** bool.const. */
export function checkBool(value: boolean, rules: { const?: boolean }, path: PathLike, sink: Sink): void {
  const c = own(rules, "const");
  if (c !== undefined && value !== c) sink(path, `bool.const ${c}`, value);
}

/** enum const, defined_only (the value is one the enum declares), in, not_in. */
export function checkEnum(
  e: DescEnum | undefined,
  value: number,
  rules: { const?: number; definedOnly?: boolean; in: number[]; notIn: number[] },
  path: PathLike,
  sink: Sink,
): void {
  const c = own(rules, "const");
  if (c !== undefined && value !== c) sink(path, `enum.const ${c}`, value);
  if (own(rules, "definedOnly") && e && !e.values.some((x) => x.number === value))
    sink(path, `enum.defined_only ${e.typeName}`, value);
  if (rules.in.length > 0 && !rules.in.includes(value)) sink(path, `enum.in [${rules.in.join(", ")}]`, value);
  if (rules.notIn.includes(value)) sink(path, `enum.not_in [${rules.notIn.join(", ")}]`, value);
}
