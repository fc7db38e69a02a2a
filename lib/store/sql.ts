/**
 * Store adapter over SQLite: the storage of a Durable Object (`ctx.storage.sql`) and, on Node, the
 * file store (`file.ts`, libsql). Every method runs its statements synchronously with no await in
 * between, and both hosts run one event at a time over a database no other process writes, so
 * each read-compare-write is atomic without a transaction.
 */
import { decodeValue, encodeValue } from "./codec.ts";
import type { DeleteOptions, Entry, ListOptions, ListPage, PutOptions, PutResult, Store } from "./store.ts";

/** Page size when `limit` is omitted, and the most one page returns. */
export const MAX_LIST_LIMIT = 1000;

/**
 * A page also ends once its keys and encoded values reach this many characters (about 1 MiB; the
 * encoding is ASCII but for non-ASCII names), whatever `limit` says, so one list call never decodes
 * more than about a megabyte, however large the values under the prefix (a Durable Object has
 * 128 MB for everything; docs/scaling.md). A page holds at least one entry, so paging always moves.
 */
export const MAX_PAGE_CHARS = 1 << 20;

/** Bound parameters per statement stay under the Durable Object SQL limit (100). */
const KEYS_PER_QUERY = 90;

type Row = { key: string; value: string; version: number };

/** A value SQLite binds or returns here (the same set as the Durable Object's SqlStorageValue). */
export type SqlValue = ArrayBuffer | string | number | null;

/**
 * The part of the Durable Object's `SqlStorage` this adapter uses: run one statement with `?`
 * bindings, read its rows. Any SQLite binding can offer it (see `file.ts`).
 */
export interface SqlExec {
  exec<T extends Record<string, SqlValue>>(query: string, ...bindings: SqlValue[]): SqlRows<T>;
}

/** The rows of one statement, read once: iterate them or take them all. */
export interface SqlRows<T> extends Iterable<T> {
  toArray(): T[];
}

/**
 * A Store over table `kv` (created if missing). Keys order by UTF-8 bytes (SQLite BINARY), which
 * is code point order, the same order the memory adapter keeps.
 */
export function createSqlStore(sql: SqlExec): Store {
  sql.exec(
    "CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value TEXT NOT NULL, version INTEGER NOT NULL) WITHOUT ROWID",
  );

  const read = (key: string): Row | undefined =>
    sql.exec<Row>("SELECT key, value, version FROM kv WHERE key = ?", key).toArray()[0];

  const entry = <T>(row: Row): Entry<T> => ({
    key: row.key,
    value: decodeValue<T>(row.value),
    version: row.version,
  });

  return {
    async get<T>(key: string) {
      const row = read(key);
      return row && entry<T>(row);
    },

    async getMany<T>(keys: readonly string[]) {
      const out = new Map<string, Entry<T>>();
      const unique = [...new Set(keys)];
      for (let i = 0; i < unique.length; i += KEYS_PER_QUERY) {
        const chunk = unique.slice(i, i + KEYS_PER_QUERY);
        const marks = chunk.map(() => "?").join(", ");
        for (const row of sql.exec<Row>(
          `SELECT key, value, version FROM kv WHERE key IN (${marks})`,
          ...chunk,
        )) {
          out.set(row.key, entry<T>(row));
        }
      }
      return out;
    },

    async put<T>(key: string, value: T, options: PutOptions = {}): Promise<PutResult> {
      const text = encodeValue(value);
      const current = read(key);
      if (options.ifVersion !== undefined && (current?.version ?? 0) !== options.ifVersion) {
        return { ok: false, current: current && entry(current) };
      }
      const version = (current?.version ?? 0) + 1;
      sql.exec(
        "INSERT INTO kv (key, value, version) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, version = excluded.version",
        key,
        text,
        version,
      );
      return { ok: true, version };
    },

    async delete(key: string, options: DeleteOptions = {}) {
      const cursor =
        options.ifVersion === undefined
          ? sql.exec("DELETE FROM kv WHERE key = ? RETURNING key", key)
          : sql.exec("DELETE FROM kv WHERE key = ? AND version = ? RETURNING key", key, options.ifVersion);
      return cursor.toArray().length > 0;
    },

    async list<T>(prefix: string, options: ListOptions = {}): Promise<ListPage<T>> {
      const limit = pageLimit(options.limit);
      const where = ["key >= ?"];
      const args: (string | number)[] = [prefix];
      const upper = prefixUpperBound(prefix);
      if (upper !== undefined) {
        where.push("key < ?");
        args.push(upper);
      }
      if (options.cursor !== undefined) {
        where.push("key > ?");
        args.push(options.cursor);
      }
      args.push(limit + 1);
      const rows = sql.exec<Row>(
        `SELECT key, value, version FROM kv WHERE ${where.join(" AND ")} ORDER BY key LIMIT ?`,
        ...args,
      );
      // Rows are read one at a time (the Durable Object's cursor is lazy) and decoded only if kept.
      const entries: Entry<T>[] = [];
      let chars = 0;
      for (const row of rows) {
        if (entries.length === limit || chars >= MAX_PAGE_CHARS) {
          return { entries, cursor: entries[entries.length - 1]!.key };
        }
        entries.push(entry<T>(row));
        chars += row.key.length + row.value.length;
      }
      return { entries };
    },
  };
}

/** The page size a list call asks for, refused unless a positive integer, capped at MAX_LIST_LIMIT (every adapter's rule). */
export function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return MAX_LIST_LIMIT;
  if (!Number.isInteger(limit) || limit < 1)
    throw new RangeError(`store: list limit ${limit} is not a positive integer`);
  return Math.min(limit, MAX_LIST_LIMIT);
}

/**
 * The least string, in code point order, above every string that starts with `prefix`; undefined
 * when there is none (empty prefix, or only U+10FFFF). Trailing U+10FFFF are dropped, then the last
 * code point goes up by one, stepping over the surrogate range.
 */
export function prefixUpperBound(prefix: string): string | undefined {
  const points = Array.from(prefix, (c) => c.codePointAt(0)!);
  while (points.length > 0 && points[points.length - 1] === 0x10ffff) points.pop();
  const last = points.pop();
  if (last === undefined) return undefined;
  points.push(last + 1 === 0xd800 ? 0xe000 : last + 1);
  return String.fromCodePoint(...points);
}
