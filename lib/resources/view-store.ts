/**
 * The view table (lib/resources/view-table.ts) in the store, in bounded parts: a table of thousands of
 * overlays or restricted exports would pass the Durable Object's 2 MB value limit (and DynamoDB's
 * 400 KB item) as one value. Each entry (a Sidecar, one service's exportTo, one service's overlay in
 * one view) has an id; ids hash into `viewBuckets` buckets per section; a bucket's entries, sorted by
 * id, are cut into parts of at most `maxViewPartChars` characters of JSON (lib/ingest/buckets.ts
 * splitParts), each stored under keys.viewPart() with its content hash. A small head
 * (keys.viewHead()) lists the parts and their hashes, and its version is the hash of that list.
 *
 * Writes put only the parts whose hash changed, then the head, then delete the parts it no longer
 * lists, so a reader that read the head finds each part at the hash the head names, or (a flush
 * wrote meanwhile) reads the head again. Readers keep the parts they read keyed by hash: a lookup
 * whose head version is unchanged costs one small read, a changed one reads the changed parts only.
 * The table in memory is the ViewTable it always was. A store written by an older version holds
 * the table whole at keys.viewTable(): readers read it until the flush's first load moves it.
 */

import { byCreation } from "../registry/istio/config-meta.ts";
import type { SidecarModel } from "../registry/istio/sidecar.ts";
import type { VirtualServiceImport } from "../registry/istio/virtual-service-select.ts";
import { keys } from "../store/keys.ts";
import { splitParts } from "../store/parts.ts";
import type { Store } from "../store/store.ts";
import { resourceVersion } from "./version.ts";
import { emptyViewTable, type OverlayRecord, type ViewTable } from "./view-table.ts";

/** Buckets per section: the head lists at most this many parts per section while no bucket spills. */
export const viewBuckets = 64;

/**
 * The JSON characters of entries one part may hold (ids and values; names are ASCII by
 * validation, so characters are bytes): a stored part stays under 128 KiB plus its hash, unless one
 * entry alone is larger (one service's overlay in one view: its resource names).
 */
export const maxViewPartChars = 128 * 1024;

/**
 * The sections of the table: Sidecars, exportTo of services, overlays per view and service, and the
 * VirtualServices a Sidecar may import (in the table's order: ids are their zero-padded positions).
 */
type Section = "sidecars" | "exports" | "overlays" | "virtualServices";

/** One part as listed by the head: where it is and the hash of its entries. */
export type PartRef = [section: Section, bucket: number, part: number, hash: string];

/** Stored under keys.viewHead(). */
export interface ViewHead {
  /** Hash of `parts`: equal versions, equal tables. */
  version: string;
  parts: PartRef[];
}

/** Stored under keys.viewPart(): entries [id, value] sorted by id, and their hash (the head's). */
export interface ViewPart {
  hash: string;
  entries: [id: string, value: unknown][];
}

/** A table as the flush loaded it, with the head it was read from (saveViewTable compares against it). */
export interface LoadedViewTable {
  table: ViewTable;
  head: ViewHead;
}

const keyOf = (p: PartRef) => keys.viewPart(p[0], p[1], p[2]);
const encoder = new TextEncoder();
const hashOf = (json: string) => resourceVersion(encoder.encode(json));

/** FNV-1a of an id, to its bucket: stable on every runtime, spreads ids of one namespace too. */
function bucketOf(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return (h >>> 0) % viewBuckets;
}

/** The table's entries, per section: [id, value]. */
function entriesOf(table: ViewTable): Record<Section, [string, unknown][]> {
  const overlays: [string, unknown][] = [];
  for (const [view, bySvc] of Object.entries(table.overlays))
    for (const [svc, record] of Object.entries(bySvc)) overlays.push([`${view}/${svc}`, record]);
  return {
    sidecars: table.sidecars.map((s) => [`${s.namespace}/${s.name}`, s]),
    exports: Object.entries(table.exports),
    overlays,
    virtualServices: (table.virtualServices ?? []).map((v, i) => [String(i).padStart(8, "0"), v]),
  };
}

/** The parts of a table: per section and bucket, sorted by id, split by size; hashed. */
async function partsOf(table: ViewTable): Promise<{ ref: PartRef; value: ViewPart }[]> {
  const out: { ref: PartRef; value: ViewPart }[] = [];
  for (const [section, entries] of Object.entries(entriesOf(table)) as [Section, [string, unknown][]][]) {
    const buckets = new Map<number, [string, string, unknown][]>();
    for (const [id, value] of entries) {
      const b = bucketOf(id);
      const list = buckets.get(b) ?? buckets.set(b, []).get(b);
      list?.push([id, JSON.stringify(value), value]);
    }
    for (const b of [...buckets.keys()].sort((x, y) => x - y)) {
      const sorted = (buckets.get(b) ?? []).sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
      const split = splitParts(
        sorted.map(([id, json]) => [id, json] as const),
        maxViewPartChars,
      );
      let at = 0;
      for (const [n, slice] of split.entries()) {
        const chunk = sorted.slice(at, at + slice.length);
        at += slice.length;
        const hash = await hashOf(
          `[${chunk.map(([id, json]) => `[${JSON.stringify(id)},${json}]`).join(",")}]`,
        );
        out.push({ ref: [section, b, n, hash], value: { hash, entries: chunk.map(([id, , v]) => [id, v]) } });
      }
    }
  }
  return out;
}

/** The table the parts hold (the order views.ts builds: records sorted by key, Sidecars oldest first). */
function tableOf(parts: Iterable<[Section, ViewPart]>): ViewTable {
  const table = emptyViewTable();
  const overlays: Record<string, Record<string, OverlayRecord>> = {};
  const exports: Record<string, string[]> = {};
  const imports: [string, VirtualServiceImport][] = [];
  for (const [section, part] of parts)
    for (const [id, value] of part.entries) {
      if (section === "sidecars") table.sidecars.push(value as SidecarModel);
      else if (section === "virtualServices") imports.push([id, value as VirtualServiceImport]);
      else if (section === "exports") exports[id] = value as string[];
      else {
        const slash = id.indexOf("/");
        const view = id.slice(0, slash);
        const bySvc = overlays[view] ?? {};
        overlays[view] = bySvc;
        bySvc[id.slice(slash + 1)] = value as OverlayRecord;
      }
    }
  table.sidecars.sort(byCreation);
  table.exports = sortedRecord(exports);
  if (imports.length > 0)
    table.virtualServices = imports.sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([, v]) => v);
  for (const view of Object.keys(overlays).sort())
    table.overlays[view] = sortedRecord(overlays[view] as Record<string, OverlayRecord>);
  return table;
}

function sortedRecord<V>(o: Record<string, V>): Record<string, V> {
  return Object.fromEntries(
    Object.keys(o)
      .sort()
      .map((k) => [k, o[k] as V]),
  );
}

/** Reads of the head and its parts a reader tries before it gives up on a store that keeps changing. */
const attempts = 5;

/**
 * The parts `head` lists, those `cached` holds at the listed hash taken from it; undefined when a
 * part is missing or at another hash (a flush wrote meanwhile: read the head again).
 */
async function readParts(
  store: Store,
  head: ViewHead,
  cached: ReadonlyMap<string, ViewPart>,
): Promise<Map<string, ViewPart> | undefined> {
  const out = new Map<string, ViewPart>();
  const wanted: string[] = [];
  for (const ref of head.parts) {
    const key = keyOf(ref);
    const have = cached.get(key);
    if (have?.hash === ref[3]) out.set(key, have);
    else wanted.push(key);
  }
  const got = wanted.length > 0 ? await store.getMany<ViewPart>(wanted) : new Map();
  for (const ref of head.parts) {
    const key = keyOf(ref);
    if (out.has(key)) continue;
    const part = got.get(key)?.value;
    if (part?.hash !== ref[3]) return undefined;
    out.set(key, part);
  }
  return out;
}

/** The head (`first` when already read) and the table its parts hold; undefined when there is no head. */
async function readTable(
  store: Store,
  cached: ReadonlyMap<string, ViewPart>,
  first?: ViewHead,
): Promise<{ head: ViewHead; parts: Map<string, ViewPart>; table: ViewTable } | undefined> {
  for (let i = 0; i < attempts; i++) {
    const head = i === 0 && first ? first : (await store.get<ViewHead>(keys.viewHead()))?.value;
    if (!head) return undefined;
    const parts = await readParts(store, head, cached);
    if (parts)
      return { head, parts, table: tableOf(head.parts.map((r) => [r[0], parts.get(keyOf(r)) as ViewPart])) };
  }
  throw new Error(`views: the view table kept changing while read; gave up after ${attempts} attempts`);
}

/** Reads the view table for the streams of one host, re-reading parts only when the head's version changed. */
export interface ViewTableReader {
  /** The table now (empty when none was written); the same object while the head's version is unchanged. */
  read(): Promise<ViewTable>;
}

/** Creates a reader over `store` (keys.viewHead(), keys.viewPart(); keys.viewTable() before migration). */
export function createViewTableReader(store: Store): ViewTableReader {
  let version: string | undefined;
  let table: ViewTable | undefined;
  let parts = new Map<string, ViewPart>();
  return {
    async read() {
      const head = (await store.get<ViewHead>(keys.viewHead()))?.value;
      if (!head) return (await store.get<ViewTable>(keys.viewTable()))?.value ?? emptyViewTable();
      if (table && head.version === version) return table;
      const got = await readTable(store, parts, head);
      if (!got) return emptyViewTable();
      version = got.head.version;
      parts = got.parts;
      table = got.table;
      return table;
    },
  };
}

/**
 * The flush's read of the table (all parts, once per flush); undefined when the store never had
 * one. A table stored whole by an older version (keys.viewTable()) is written in parts and its
 * value deleted here, once, logged.
 */
export async function loadViewTable(
  store: Store,
  log?: (line: string) => void,
): Promise<LoadedViewTable | undefined> {
  const got = await readTable(store, new Map());
  if (got) return { table: got.table, head: got.head };
  const legacy = (await store.get<ViewTable>(keys.viewTable()))?.value;
  if (!legacy) return undefined;
  const head = await saveViewTable(store, legacy, undefined);
  await store.delete(keys.viewTable());
  log?.(
    `views: moved the view table of the previous layout (${keys.viewTable()}) into ${head.parts.length} part(s)`,
  );
  return { table: legacy, head };
}

/**
 * Writes `table` over the parts `before` lists: only parts whose content changed, then the head
 * (when its version changed), then deletes what it no longer lists. Returns the new head.
 */
export async function saveViewTable(
  store: Store,
  table: ViewTable,
  before: ViewHead | undefined,
): Promise<ViewHead> {
  const parts = await partsOf(table);
  const had = new Map((before?.parts ?? []).map((r) => [keyOf(r), r[3]]));
  for (const { ref, value } of parts) if (had.get(keyOf(ref)) !== ref[3]) await store.put(keyOf(ref), value);
  const refs = parts.map((p) => p.ref);
  const head: ViewHead = { version: await hashOf(JSON.stringify(refs)), parts: refs };
  if (head.version !== before?.version) await store.put(keys.viewHead(), head);
  const kept = new Set(refs.map(keyOf));
  for (const key of had.keys()) if (!kept.has(key)) await store.delete(key);
  return head;
}
