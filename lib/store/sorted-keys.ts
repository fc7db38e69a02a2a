/**
 * A set of strings kept in code-point order (the Store's key order) as a list of small sorted
 * chunks, so inserting stays cheap at hundreds of thousands of keys and a prefix range is a
 * binary search plus a walk. Used by the staged store to merge its own writes into list pages.
 */
import { compareKeys } from "./memory.ts";

const chunkSize = 512;

/** An ordered set of keys: `add` is idempotent; walks start after (or at) a key. */
export interface SortedKeys {
  add(key: string): void;
  readonly size: number;
  /** Keys > `after`, ascending. Do not add keys while walking. */
  from(after: string): Iterable<string>;
  /** Keys >= `start`, ascending. */
  fromInclusive(start: string): Iterable<string>;
}

/** A fresh, empty ordered key set. */
export function createSortedKeys(): SortedKeys {
  const chunks: string[][] = [];
  let size = 0;

  /** Index of the first chunk whose last key is >= key (chunks.length when none). */
  const chunkFor = (key: string): number => {
    let lo = 0;
    let hi = chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const chunk = chunks[mid] as string[];
      if (compareKeys(chunk[chunk.length - 1] as string, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };

  function* walk(start: string, bound: (chunk: readonly string[], key: string) => number) {
    let c = chunkFor(start);
    let i = c < chunks.length ? bound(chunks[c] as string[], start) : 0;
    for (; c < chunks.length; c++, i = 0) {
      const chunk = chunks[c] as string[];
      for (; i < chunk.length; i++) yield chunk[i] as string;
    }
  }

  return {
    add(key) {
      if (chunks.length === 0) {
        chunks.push([key]);
        size = 1;
        return;
      }
      const c = Math.min(chunkFor(key), chunks.length - 1);
      const chunk = chunks[c] as string[];
      const i = lowerBound(chunk, key);
      if (chunk[i] === key) return;
      chunk.splice(i, 0, key);
      size++;
      if (chunk.length > chunkSize) chunks.splice(c + 1, 0, chunk.splice(chunkSize >>> 1));
    },
    get size() {
      return size;
    },
    from(after) {
      return walk(after, upperBound);
    },
    fromInclusive(start) {
      return walk(start, lowerBound);
    },
  };
}

function lowerBound(sorted: readonly string[], key: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareKeys(sorted[mid] as string, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function upperBound(sorted: readonly string[], key: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareKeys(sorted[mid] as string, key) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
