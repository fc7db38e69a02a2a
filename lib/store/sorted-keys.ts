/**
 * A set of strings kept in code-point order (the Store's key order) as a list of small sorted
 * chunks, so inserting and deleting stay cheap at hundreds of thousands of keys (one flat sorted
 * array moves half of itself on every insert) and a prefix range is a binary search plus a walk.
 * The memory store's index, and the staged store's index of its own writes.
 */

const chunkSize = 512;

/** An ordered set of keys: `add` is idempotent; walks start after (or at) a key. */
export interface SortedKeys {
  add(key: string): void;
  /** Removes `key` if present. */
  delete(key: string): void;
  readonly size: number;
  /** Keys > `after`, ascending. Do not add keys while walking. */
  from(after: string): Iterable<string>;
  /** Keys >= `start`, ascending. */
  fromInclusive(start: string): Iterable<string>;
}

/**
 * A fresh, empty ordered key set. Each operation tests its own key for surrogates once; while no
 * key held has any either, comparisons are the engine's plain `<` (UTF-16 order is code-point
 * order then), not compareKeys' per-call scan.
 */
export function createSortedKeys(): SortedKeys {
  const chunks: string[][] = [];
  let size = 0;
  /** How many keys held contain a surrogate code unit. */
  let surrogateKeys = 0;

  /** The comparison that orders `key` against the keys held by code point. */
  const comparing = (key: string): Compare =>
    surrogateKeys === 0 && !surrogate.test(key) ? compareUnits : compareKeys;

  /** Index of the first chunk whose last key is >= key (chunks.length when none). */
  const chunkFor = (key: string, cmp: Compare): number => {
    let lo = 0;
    let hi = chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const chunk = chunks[mid] as string[];
      if (cmp(chunk[chunk.length - 1] as string, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };

  function* walk(start: string, bound: Bound) {
    const cmp = comparing(start);
    let c = chunkFor(start, cmp);
    let i = c < chunks.length ? bound(chunks[c] as string[], start, cmp) : 0;
    for (; c < chunks.length; c++, i = 0) {
      const chunk = chunks[c] as string[];
      for (; i < chunk.length; i++) yield chunk[i] as string;
    }
  }

  return {
    add(key) {
      const cmp = comparing(key);
      const counted = cmp === compareKeys && surrogate.test(key) ? 1 : 0;
      if (chunks.length === 0) {
        chunks.push([key]);
        size = 1;
        surrogateKeys += counted;
        return;
      }
      const c = Math.min(chunkFor(key, cmp), chunks.length - 1);
      const chunk = chunks[c] as string[];
      const i = lowerBound(chunk, key, cmp);
      if (chunk[i] === key) return;
      chunk.splice(i, 0, key);
      size++;
      surrogateKeys += counted;
      if (chunk.length > chunkSize) chunks.splice(c + 1, 0, chunk.splice(chunkSize >>> 1));
    },
    delete(key) {
      const cmp = comparing(key);
      const c = chunkFor(key, cmp);
      const chunk = chunks[c];
      if (!chunk) return;
      const i = lowerBound(chunk, key, cmp);
      if (chunk[i] !== key) return;
      chunk.splice(i, 1);
      size--;
      if (cmp === compareKeys && surrogate.test(key)) surrogateKeys--;
      if (chunk.length === 0) chunks.splice(c, 1);
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

type Compare = (a: string, b: string) => number;
type Bound = (sorted: readonly string[], key: string, cmp: Compare) => number;

/** Code-unit order: code-point order when neither string holds a surrogate. */
function compareUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function lowerBound(sorted: readonly string[], key: string, cmp: Compare): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cmp(sorted[mid] as string, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function upperBound(sorted: readonly string[], key: string, cmp: Compare): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cmp(sorted[mid] as string, key) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const surrogate = /[\ud800-\udfff]/;

/**
 * Orders strings by Unicode code point, which is also UTF-8 byte order. Plain `<` compares UTF-16
 * code units and would put U+10000.. (surrogate pairs) before U+E000..U+FFFF.
 */
export function compareKeys(a: string, b: string): number {
  if (a === b) return 0;
  // Without surrogates, UTF-16 order is code-point order: let the engine compare (its native comparison).
  if (!surrogate.test(a) && !surrogate.test(b)) return a < b ? -1 : 1;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/** Moves surrogates (0xD800-0xDFFF) above 0xE000-0xFFFF, keeping order within each group. */
function codePointRank(unit: number): number {
  if (unit < 0xd800) return unit;
  return unit < 0xe000 ? unit + 0x2000 : unit - 0x800;
}
