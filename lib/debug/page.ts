/**
 * One bounded page of a store prefix for a debug endpoint: at most `limit` entries, and the cursor
 * to the next page when more may follow. The cursor is the last key of the page; one from a client
 * is accepted only under the same prefix, so no request reads outside what its path shows.
 */
import type { Entry, Store } from "../store/store.ts";
import type { Parsed } from "./params.ts";

/** A page of entries and where the next one starts (absent on the last page). */
export interface DebugPage<T> {
  entries: Entry<T>[];
  next?: string;
}

/** What a paged debug endpoint answers: the items of one page and the cursor of the next. */
export interface DebugList<T> {
  items: T[];
  next?: string;
}

/** The most JSON one page of items may take, whatever their number: a page ends early past it. */
export const maxPageBytes = 8 * 1024 * 1024;

/**
 * Maps a page's entries to items, keeping its cursor. With `sized`, the page ends after the item
 * that takes its JSON past maxPageBytes (at least one item), and the cursor resumes after it.
 */
export function mapPage<T, U>(
  page: DebugPage<T>,
  f: (entry: Entry<T>) => U | undefined,
  sized = false,
): DebugList<U> {
  const items: U[] = [];
  let bytes = 0;
  for (const [i, e] of page.entries.entries()) {
    const u = f(e);
    if (u === undefined) continue;
    items.push(u);
    if (!sized) continue;
    bytes += JSON.stringify(u).length;
    if (bytes >= maxPageBytes && i < page.entries.length - 1) return { items, next: e.key };
  }
  return { items, ...(page.next !== undefined && { next: page.next }) };
}

/** Reads up to `limit` entries under `prefix` after `cursor`; refuses a cursor from elsewhere. */
export async function readPage<T>(
  store: Store,
  prefix: string,
  limit: number,
  cursor: string | undefined,
): Promise<Parsed<DebugPage<T>>> {
  if (cursor !== undefined && !cursor.startsWith(prefix))
    return { ok: false, error: "query parameter cursor is not one this path returned; start without it" };
  const entries: Entry<T>[] = [];
  let after = cursor;
  // Adapters may return short pages: follow them until the page is full or the prefix ends.
  for (;;) {
    const page = await store.list<T>(prefix, {
      limit: limit - entries.length,
      ...(after !== undefined && { cursor: after }),
    });
    for (const e of page.entries) entries.push(e);
    if (page.cursor === undefined) return { ok: true, value: { entries } };
    after = page.cursor;
    if (entries.length >= limit) {
      const last = entries[entries.length - 1];
      return { ok: true, value: { entries, next: last ? last.key : after } };
    }
  }
}
