/** Structural equality for plain data built in a fixed field order (the converters guarantee it). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === undefined || b === undefined) return a === b; // one side absent: no need to serialize the other
  return JSON.stringify(a) === JSON.stringify(b);
}
