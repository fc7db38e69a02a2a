/**
 * The durable embedded store for Node: the one SQL store (`sql.ts`, the same code the Durable
 * Object runs) over a SQLite file opened with libsql, whose prebuilt binary ships inside npm
 * packages (no compile, no download at install). Node only: nothing the Worker bundles imports it.
 *
 * Durability: write-ahead log, each put or delete its own transaction, committed to the log
 * before its promise settles. A process killed at any point (kill -9) loses no acknowledged write
 * and leaves no torn state: a reopen replays the log up to its last whole commit. With
 * `synchronous=NORMAL` the log is fsynced at checkpoints, not at every commit, so an OS crash or
 * power cut may roll back the last commits (never tear them); the relay's relist repairs that.
 */
import { accessSync, constants, mkdirSync } from "node:fs";
import { resolve } from "node:path";
import Database from "libsql";
import { createSqlStore, type SqlExec, type SqlRows, type SqlValue } from "./sql.ts";
import type { Store } from "./store.ts";

/** The database file inside the data directory (with `-wal` beside it while open). */
export const FILE_STORE_NAME = "edgepilot.sqlite";

/** Distinct statements kept prepared; the SQL store issues a few dozen shapes at most. */
const STATEMENT_CACHE = 256;

export interface FileStoreOptions {
  /** The data directory; created if missing. A relative path is taken from the working directory. */
  dir: string;
}

/** A Store kept in a file. */
export interface FileStore extends Store {
  /** Absolute path of the database file. */
  readonly path: string;
  /**
   * Checkpoints the log into the database file and closes. Idempotent; every call made after it
   * throws. The file lock is released when the process exits (libsql frees the connection only
   * once its statements are garbage), so reopen the directory from a new process.
   */
  close(): void;
}

/** Why a data directory cannot hold the store; the message names the directory and the cause. */
export class FileStoreError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "FileStoreError";
  }
}

/**
 * Opens (or creates) the store in `options.dir`. The file is locked for this process alone
 * (SQLite exclusive locking, released by the OS if the process dies), so a second control plane
 * on the same directory is refused instead of racing this one's compare-and-set.
 */
export function createFileStore(options: FileStoreOptions): FileStore {
  const dir = resolve(options.dir);
  prepareDir(dir);
  const path = resolve(dir, FILE_STORE_NAME);
  const db = open(path);
  let closed = false;
  const store = createSqlStore(
    sqlOver(db, () => {
      if (closed) throw new Error(`file store: ${path} used after close()`);
    }),
  );
  return {
    ...store,
    path,
    close() {
      if (closed) return;
      closed = true;
      // Everything into the main file and the log emptied, so what stays on disk is one whole file
      // whenever libsql lets go of the connection (at garbage collection or exit, with its lock).
      db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      db.close();
    },
  };
}

function prepareDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    throw new FileStoreError(`file store: cannot create data directory ${dir}: ${errorText(e)}`, {
      cause: e,
    });
  }
  try {
    accessSync(dir, constants.R_OK | constants.W_OK);
  } catch (e) {
    throw new FileStoreError(`file store: data directory ${dir} is not writable: ${errorText(e)}`, {
      cause: e,
    });
  }
}

function open(path: string): Database.Database {
  let db: Database.Database | undefined;
  try {
    db = new Database(path);
    // Exclusive before WAL: the log index lives in this process's memory (no -shm file) and the
    // first write below takes the lock this process keeps until it closes or dies.
    db.pragma("locking_mode = EXCLUSIVE");
    // A file system without the locking WAL needs leaves the mode as it was: refuse, not degrade.
    const { journal_mode: mode } = db.prepare("PRAGMA journal_mode = WAL").get() as { journal_mode: string };
    if (mode !== "wal") throw new Error(`journal_mode is ${mode}, not wal`);
    db.pragma("synchronous = NORMAL");
    db.exec("BEGIN IMMEDIATE; COMMIT");
    return db;
  } catch (e) {
    db?.close();
    const code = (e as { code?: unknown }).code;
    if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED") {
      throw new FileStoreError(`file store: ${path} is in use by another process`, { cause: e });
    }
    throw new FileStoreError(`file store: cannot open ${path}: ${errorText(e)}`, { cause: e });
  }
}

/** `SqlExec` over libsql: statements prepared once, rows read eagerly (sql.ts reads them all anyway). */
function sqlOver(db: Database.Database, assertOpen: () => void): SqlExec {
  const statements = new Map<string, Database.Statement<SqlValue[]>>();
  const prepared = (query: string) => {
    let statement = statements.get(query);
    if (!statement) {
      statement = db.prepare<SqlValue[]>(query);
      if (statements.size >= STATEMENT_CACHE) statements.delete(statements.keys().next().value!);
      statements.set(query, statement);
    }
    return statement;
  };
  return {
    exec<T extends Record<string, SqlValue>>(query: string, ...bindings: SqlValue[]): SqlRows<T> {
      assertOpen();
      const rows = prepared(query).all(...bindings) as T[];
      return { toArray: () => rows, [Symbol.iterator]: () => rows[Symbol.iterator]() };
    },
  };
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
