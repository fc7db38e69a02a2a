/**
 * The view table in parts (lib/resources/view-store.ts) on the memory and file stores: round trip, a
 * large table in parts each under the bound, writes only where the table changed, readers that
 * re-read only a changed head's changed parts, and the move of a table an older version stored whole.
 */
import { describe, expect, it } from "vitest";
import { toSidecar } from "../../../lib/registry/istio/sidecar.ts";
import {
  createViewTableReader,
  loadViewTable,
  maxViewPartChars,
  saveViewTable,
  type ViewHead,
} from "../../../lib/resources/view-store.ts";
import { emptyViewTable, type ViewTable } from "../../../lib/resources/view-table.ts";
import { keys, listAll, type Store } from "../../../lib/store/index.ts";
import { migrationStores } from "../ingest/migration-stores.ts";

const RDS = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration";
const host = (ns: string, i: number) => `svc-${i}.${ns}.svc.cluster.local`;

/**
 * `overlays` services' overlays spread over `views` namespaces (each with a route and a hidden
 * name), `exports` services exported to two namespaces, and two Sidecars.
 */
function bigTable(o: { overlays: number; views: number; exports: number }): ViewTable {
  const t = emptyViewTable();
  t.sidecars = [
    toSidecar(
      { name: "default", namespace: "b", creationTimestamp: "2026-01-02T00:00:00Z" },
      { egress: [{ hosts: ["./*"] }] },
    ),
    toSidecar(
      { name: "default", namespace: "a", creationTimestamp: "2026-01-01T00:00:00Z" },
      { egress: [{ hosts: ["*/*"] }] },
    ),
  ];
  for (let i = 0; i < o.exports; i++) t.exports[`ns-${i % 50}/${host(`ns-${i % 50}`, i)}`] = ["a", "b"];
  for (let i = 0; i < o.overlays; i++) {
    const view = `view-${i % o.views}`;
    const name = `${host("default", i)}:9080`;
    t.overlays[view] ??= {};
    (t.overlays[view] as Record<string, unknown>)[`default/${host("default", i)}`] = {
      [RDS]: { names: [name], versions: [`${i}`.padStart(16, "0")], hidden: [`${host("other", i)}:9080`] },
    };
  }
  // The order views.ts writes: records sorted by key, Sidecars oldest first.
  t.sidecars.reverse();
  t.exports = Object.fromEntries(Object.entries(t.exports).sort(([a], [b]) => (a < b ? -1 : 1)));
  t.overlays = Object.fromEntries(
    Object.keys(t.overlays)
      .sort()
      .map((v) => [
        v,
        Object.fromEntries(Object.entries(t.overlays[v] ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))),
      ]),
  );
  return t;
}

/** Counts puts, deletes and reads by key prefix. */
function counting(store: Store) {
  const n = { put: 0, del: 0, read: 0 };
  const counted: Store = {
    ...store,
    get: (k) => {
      n.read++;
      return store.get(k);
    },
    getMany: (ks) => {
      n.read += ks.length;
      return store.getMany(ks);
    },
    put: (k, v, o) => {
      n.put++;
      return store.put(k, v, o);
    },
    delete: (k, o) => {
      n.del++;
      return store.delete(k, o);
    },
  };
  return { store: counted, n };
}

const stores = migrationStores("edgepilot-views-");

describe.each(stores)("view table in parts, %s store", (_name, open) => {
  it(`5,000 overlays and 5,000 exports: parts each under ${maxViewPartChars} characters, read back equal`, async () => {
    const store = open();
    const table = bigTable({ overlays: 5000, views: 40, exports: 5000 });
    const whole = JSON.stringify(table).length;
    expect(whole).toBeGreaterThan(1_000_000);
    await saveViewTable(store, table, undefined);
    const parts = await listAll(store, "views/");
    expect(parts.length).toBeGreaterThan(100);
    // Every value, head included, under the bound (far below 2 MB DO and 400 KB DynamoDB limits).
    for (const e of parts) expect(JSON.stringify(e.value).length).toBeLessThan(maxViewPartChars + 256);
    const head = (await store.get<ViewHead>(keys.viewHead()))?.value as ViewHead;
    expect(JSON.stringify(head).length).toBeLessThan(32 * 1024);
    expect((await loadViewTable(store))?.table).toEqual(table);
    expect(await createViewTableReader(store).read()).toEqual(table);
  });

  it("the VirtualServices a Sidecar may import: kept in their order through a round trip (12 of them)", async () => {
    const store = open();
    const table = bigTable({ overlays: 3, views: 2, exports: 3 });
    table.virtualServices = Array.from({ length: 12 }, (_, i) => ({
      namespace: `ns-${11 - i}`,
      hosts: [host(`ns-${11 - i}`, i)],
      ...(i % 3 === 0 && { exportTo: ["."] }),
      destinations: [host("default", i), host("other", i)],
    }));
    const head = await saveViewTable(store, table, undefined);
    expect(head.parts.some((p) => p[0] === "virtualServices")).toBe(true);
    expect((await loadViewTable(store))?.table).toEqual(table);
    expect(await createViewTableReader(store).read()).toEqual(table);
  });

  it("a change of one service rewrites one part and the head; an unchanged table writes nothing", async () => {
    const { store, n } = counting(open());
    const table = bigTable({ overlays: 2000, views: 10, exports: 500 });
    const first = await saveViewTable(store, table, undefined);
    n.put = 0;
    expect(await saveViewTable(store, table, first)).toEqual(first);
    expect(n.put).toBe(0);
    const changed: ViewTable = {
      ...table,
      exports: { ...table.exports, [Object.keys(table.exports)[7] as string]: ["c"] },
    };
    const second = await saveViewTable(store, changed, first);
    expect(n.put).toBe(2);
    expect(second.version).not.toBe(first.version);
    expect((await loadViewTable(store))?.table).toEqual(changed);
  });

  it("entries that leave delete their parts; an empty table leaves only the head", async () => {
    const store = open();
    const first = await saveViewTable(store, bigTable({ overlays: 300, views: 3, exports: 30 }), undefined);
    await saveViewTable(store, emptyViewTable(), first);
    expect((await listAll(store, "views/")).map((e) => e.key)).toEqual([keys.viewHead()]);
    expect((await loadViewTable(store))?.table).toEqual(emptyViewTable());
  });

  it("a reader re-reads only the head while it is unchanged, and only changed parts after", async () => {
    const base = open();
    const table = bigTable({ overlays: 2000, views: 10, exports: 500 });
    const first = await saveViewTable(base, table, undefined);
    const { store, n } = counting(base);
    const reader = createViewTableReader(store);
    const read = await reader.read();
    expect(n.read).toBe(1 + first.parts.length);
    n.read = 0;
    expect(await reader.read()).toBe(read);
    expect(n.read).toBe(1);
    const svc = Object.keys(table.overlays["view-3"] ?? {})[0] as string;
    const next: ViewTable = {
      ...table,
      overlays: { ...table.overlays, "view-3": { ...table.overlays["view-3"], [svc]: {} } },
    };
    await saveViewTable(base, next, first);
    n.read = 0;
    expect(await reader.read()).toEqual(next);
    expect(n.read).toBe(2); // the head and the one changed part
  });

  it("a flush writing while a reader reads its parts: the reader reads the new head and gets the new table", async () => {
    const base = open();
    const table = bigTable({ overlays: 200, views: 4, exports: 50 });
    const first = await saveViewTable(base, table, undefined);
    const next: ViewTable = { ...table, exports: {} };
    let raced = false;
    const racing: Store = {
      ...base,
      getMany: async (ks) => {
        if (!raced) {
          raced = true;
          await saveViewTable(base, next, first);
        }
        return base.getMany(ks);
      },
    };
    expect(await createViewTableReader(racing).read()).toEqual(next);
    expect(raced).toBe(true);
  });

  it("a table stored whole by an older version: readers read it; the flush's load moves it, logged", async () => {
    const store = open();
    const table = bigTable({ overlays: 20, views: 2, exports: 5 });
    await store.put(keys.viewTable(), table);
    expect(await createViewTableReader(store).read()).toEqual(table);
    const lines: string[] = [];
    const loaded = await loadViewTable(store, (l) => lines.push(l));
    expect(loaded?.table).toEqual(table);
    expect(await store.get(keys.viewTable())).toBeUndefined();
    expect(lines).toEqual([
      expect.stringMatching(
        /^views: moved the view table of the previous layout \(meta\/views\) into \d+ part\(s\)$/,
      ),
    ]);
    expect((await loadViewTable(store, (l) => lines.push(l)))?.table).toEqual(table);
    expect(lines).toHaveLength(1);
  });

  it("no table at all: the flush loads nothing, readers see the empty table", async () => {
    const store = open();
    expect(await loadViewTable(store)).toBeUndefined();
    expect(await createViewTableReader(store).read()).toEqual(emptyViewTable());
  });
});
