/**
 * Repeated and map rules of protoc-gen-validate (bufbuild/protoc-gen-validate
 * templates/goshared/repeated.go, map.go): item and pair counts, `unique` over scalar items,
 * `ignore_empty` skipping an empty collection. Item, key and value rules are applied by walk.ts.
 */
import type { MapRules, RepeatedRules } from "../../../lib/gen/validate/validate_pb.ts";
import { own, type PathLike, raw, type Sink } from "./shared.ts";

/** min_items, max_items and unique; false when ignore_empty skips an empty list (no item checks either). */
export function checkRepeated(
  items: readonly unknown[],
  r: RepeatedRules,
  path: PathLike,
  sink: Sink,
): boolean {
  if (own(r, "ignoreEmpty") && items.length === 0) return false;
  const n = BigInt(items.length);
  const min = own(r, "minItems");
  const max = own(r, "maxItems");
  if (min !== undefined && n < min) sink(path, `repeated.min_items ${min}`, raw(`${items.length} items`));
  if (max !== undefined && n > max) sink(path, `repeated.max_items ${max}`, raw(`${items.length} items`));
  if (own(r, "unique")) {
    const seen = new Set<string>();
    for (const [i, v] of items.entries()) {
      if (typeof v === "object" && !(v instanceof Uint8Array))
        throw new Error(`${path}: repeated.unique on message items (protoc-gen-validate refuses it)`);
      const key = v instanceof Uint8Array ? `b${[...v].join(",")}` : `${typeof v}:${String(v)}`;
      if (seen.has(key)) sink(`${path}[${i}]`, "repeated.unique", v);
      seen.add(key);
    }
  }
  return true;
}

/**
 * min_pairs, max_pairs, no_sparse; false when ignore_empty skips an empty map. protobuf-es always
 * materializes a map entry's message value, so no_sparse can only fail on a missing value.
 */
export function checkMap(
  entries: readonly [unknown, unknown][],
  r: MapRules,
  path: PathLike,
  sink: Sink,
): boolean {
  if (own(r, "ignoreEmpty") && entries.length === 0) return false;
  const n = BigInt(entries.length);
  const min = own(r, "minPairs");
  const max = own(r, "maxPairs");
  if (min !== undefined && n < min) sink(path, `map.min_pairs ${min}`, raw(`${entries.length} pairs`));
  if (max !== undefined && n > max) sink(path, `map.max_pairs ${max}`, raw(`${entries.length} pairs`));
  if (own(r, "noSparse"))
    for (const [k, v] of entries)
      if (v === undefined) sink(`${path}[${String(k)}]`, "map.no_sparse", raw("unset"));
  return true;
}
