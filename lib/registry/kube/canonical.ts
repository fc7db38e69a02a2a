/** Small helpers that give registry output one canonical form, so equal inputs give equal JSON. */

/** Orders strings by UTF-16 code units: the same answer on every runtime and locale. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The non-empty strings of a list, sorted and unique. Does not mutate the input. */
export function sortedUnique(values: readonly string[]): string[] {
  return [...new Set(values.filter((v) => v !== ""))].sort(compareStrings);
}

/** A copy of a string record with its keys in sorted order; undefined ▶ {}. */
export function sortedRecord(record: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const source = record ?? {};
  const out: Record<string, string> = {};
  for (const key of Object.keys(source).sort(compareStrings)) out[key] = source[key]!;
  return out;
}
