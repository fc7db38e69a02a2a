/** Bounded parts: sorted tuples of names cut so that no stored value passes a store's value limit. */

/** One entry: a tuple of names, the first one the entry's id within its bucket. */
export type PartEntry = readonly string[];

/** The characters of names one part may hold (each entry counts its names plus 16). */
export const maxPartChars = 256 * 1024;

/** The characters an entry counts for: its names plus 16. */
function entryChars(e: PartEntry): number {
  let n = 16;
  for (const s of e) n += s.length;
  return n;
}

/**
 * Cuts sorted entries into parts of at most `limit` characters (at least one entry each). Each part
 * is a slice of its exact length (pushing would reserve room for 17 and more): the store keeps them.
 */
export function splitParts<E extends PartEntry>(refs: readonly E[], limit = maxPartChars): E[][] {
  const out: E[][] = [];
  let start = 0;
  let chars = 0;
  for (let i = 0; i < refs.length; i++) {
    const size = entryChars(refs[i] as E);
    if (i > start && chars + size > limit) {
      out.push(refs.slice(start, i));
      start = i;
      chars = 0;
    }
    chars += size;
  }
  if (refs.length > start) out.push(refs.slice(start));
  return out;
}
