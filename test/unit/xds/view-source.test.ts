/**
 * Serving through views (lib/xds/view-source.ts) over a real memory store: overlay vs shared
 * resolution, hidden names, and push delivery per view through real Delta sessions.
 */
import { describe, expect, it } from "vitest";
import { toSidecar } from "../../../lib/registry/istio/sidecar.ts";
import type { ResourceChange } from "../../../lib/resources/changes.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { loadViewTable, saveViewTable } from "../../../lib/resources/view-store.ts";
import type { ViewTable } from "../../../lib/resources/view-table.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createDeltaSession } from "../../../lib/xds/delta.ts";
import type { createStoreSource } from "../../../lib/xds/source.ts";
import { createStreamView } from "../../../lib/xds/stream-view.ts";
import { createViews } from "../../../lib/xds/view-source.ts";
import { req, sent } from "./delta-harness.ts";
import { host, mesh, node, RDS, resource, route } from "./view-support.ts";

const versions = (rs: StoredResource[]) => rs.map((r) => `${r.name}@${r.version}`);

describe("a view's source", () => {
  const cases = [
    {
      ns: "a",
      want: [`${route("a")}@own`, `${route("b")}@shared`],
      why: "its overlay instead of the shared route; c's hidden",
    },
    { ns: "b", want: [`${route("b")}@shared`], why: 'Sidecar "./*": other namespaces do not exist' },
    {
      ns: "c",
      want: [`${route("a")}@shared`, `${route("b")}@shared`, `${route("c")}@shared`],
      why: "no view of its own: the shared resources",
    },
    {
      ns: "",
      want: [`${route("a")}@shared`, `${route("b")}@shared`, `${route("c")}@shared`],
      why: "no namespace",
    },
  ];
  it.each(cases)("namespace '$ns': $why", async ({ ns, want }) => {
    const { base, views } = await mesh();
    const v = await views.forNamespace(ns);
    const source = views.source(v, base);
    expect(versions(await source.get(RDS, [route("a"), route("b"), route("c"), "nope"]))).toEqual(want);
    expect(versions(await source.list(RDS))).toEqual(want);
    if (v.key === "") expect(source).toBe(base);
  });

  it("an overlay of a service the view may not see is neither served nor pushed (it never widens the predicate)", async () => {
    const { store, base } = await mesh();
    // b's Sidecar sees "./*" only; an overlay of a's route stored for b (a stale one) stays unseen.
    await store.put(keys.viewResource("b", RDS, route("a")), resource("a", "own-b"));
    const loaded = await loadViewTable(store);
    const t = loaded?.table as ViewTable;
    const stale = { [`a/${host("a")}`]: { [RDS]: { names: [route("a")], versions: ["own-b"], hidden: [] } } };
    await saveViewTable(store, { ...t, overlays: { ...t.overlays, b: stale } }, loaded?.head);
    const views = createViews({ store });
    const b = await views.forNamespace("b");
    const source = views.source(b, base);
    expect(versions(await source.get(RDS, [route("a"), route("b")]))).toEqual([`${route("b")}@shared`]);
    expect(versions(await source.list(RDS))).toEqual([`${route("b")}@shared`]);
    const pushed = views.changesFor(b, [{ ...resource("a", "own-b2"), view: "b" }]);
    expect(pushed).toEqual([]);
  });

  it("a node's namespace is parsed as istiod does; a node id that is not Istio's shares the public view", async () => {
    const { views } = await mesh();
    expect((await views.forNode({ id: node("a").id } as never)).key).toBe("a");
    expect((await views.forNode({ id: "plain-client" } as never)).key).toBe("");
  });
});

describe("a push's changes per view", () => {
  const shared = (ns: string): ResourceChange => ({
    typeUrl: RDS,
    name: route(ns),
    version: "s2",
    service: `${ns}/${host(ns)}`,
  });
  const own = (view: string, ns: string): ResourceChange => ({ ...shared(ns), version: "o2", view });
  const marker = (view: string): ResourceChange => ({
    typeUrl: TypeUrl.listener,
    name: "",
    version: null,
    view,
  });
  const cases: { name: string; changes: ResourceChange[]; want: Record<string, string[] | "re-read"> }[] = [
    {
      name: "a shared change reaches every view that does not overlay, hide or exclude it",
      changes: [shared("a"), shared("b"), shared("c")],
      want: {
        a: [`${route("b")}@s2`],
        b: [`${route("b")}@s2`],
        c: [`${route("a")}@s2`, `${route("b")}@s2`, `${route("c")}@s2`],
      },
    },
    {
      name: "an overlay change reaches its view only",
      changes: [own("a", "a")],
      want: { a: [`${route("a")}@o2`], b: [], c: [] },
    },
    {
      name: "a marker of a namespace re-reads that namespace, even one sharing the public view",
      changes: [shared("b"), marker("c")],
      want: { a: [`${route("b")}@s2`], b: [`${route("b")}@s2`], c: "re-read" },
    },
    {
      name: 'a marker "*" re-reads every namespace',
      changes: [marker("*")],
      want: { a: "re-read", b: "re-read", c: "re-read" },
    },
  ];
  it.each(cases)("$name", async ({ changes, want }) => {
    const { views } = await mesh();
    for (const [ns, expected] of Object.entries(want)) {
      const got = views.changesFor(await views.forNamespace(ns), changes);
      expect(got === undefined ? "re-read" : got.map((c) => `${c.name}@${c.version}`), ns).toEqual(expected);
    }
  });

  it("the shared view takes a push without view changes as it is (no copy), and filters once per view", async () => {
    const { views } = await mesh();
    const changes = [shared("a"), shared("c")];
    const c = await views.forNamespace("c");
    expect(views.changesFor(c, changes)).toBe(changes);
    const a = await views.forNamespace("a");
    expect(views.changesFor(a, changes)).toBe(views.changesFor(a, changes));
  });
});

describe("Delta streams through their views", () => {
  async function stream(
    views: Awaited<ReturnType<typeof mesh>>["views"],
    base: ReturnType<typeof createStoreSource>,
    ns: string,
  ) {
    const view = createStreamView(views, base);
    let n = 0;
    const session = createDeltaSession({ source: view.source, nonce: () => `${ns}${++n}` });
    const first = req({
      typeUrl: RDS,
      resourceNamesSubscribe: [route("a"), route("b"), route("c")],
      node: node(ns),
    });
    await view.bind(first.node);
    const answered = await session.onRequest(first);
    return {
      answered,
      push: async (changes: ResourceChange[]) =>
        session.onPush(undefined, (await view.push({ version: 1, changes })).changes),
    };
  }

  it("each stream is answered through its namespace's view, and hears only its view's pushes", async () => {
    const { store, base, views } = await mesh();
    const a = await stream(views, base, "a");
    const c = await stream(views, base, "c");
    expect(sent(a.answered[0])).toEqual([`${route("a")}@own`, `${route("b")}@shared`]);
    expect(a.answered[0]?.removedResources).toEqual([route("c")]);
    expect(sent(c.answered[0])).toEqual([
      `${route("a")}@shared`,
      `${route("b")}@shared`,
      `${route("c")}@shared`,
    ]);

    // The flush changes the shared route of a and a's overlay: each stream gets its own.
    const sharedA = resource("a", "s2");
    const ownA = resource("a", "o2");
    await store.put(keys.resource(RDS, route("a")), sharedA);
    await store.put(keys.viewResource("a", RDS, route("a")), ownA);
    const changes: ResourceChange[] = [sharedA, { ...ownA, view: "a" }];
    expect((await a.push(changes)).map(sent)).toEqual([[`${route("a")}@o2`]]);
    expect((await c.push(changes)).map(sent)).toEqual([[`${route("a")}@s2`]]);
  });

  it("a marker re-reads the view: a namespace whose Sidecar appears stops seeing other namespaces", async () => {
    const { store, base, views } = await mesh();
    const c = await stream(views, base, "c");
    const loaded = await loadViewTable(store);
    const table = loaded?.table as ViewTable;
    await saveViewTable(
      store,
      {
        ...table,
        sidecars: [
          ...table.sidecars,
          toSidecar({ name: "default", namespace: "c" }, { egress: [{ hosts: ["./*"] }] }),
        ],
      },
      loaded?.head,
    );
    const pushed = await c.push([{ typeUrl: TypeUrl.listener, name: "", version: null, view: "*" }]);
    expect(pushed.flatMap((r) => r.removedResources).sort()).toEqual([route("a"), route("b")]);
  });
});

describe("the root namespace views resolve with", () => {
  it("is the stored MeshConfig's: its Sidecar scopes every namespace without one", async () => {
    const { store, base } = await mesh();
    const loaded = await loadViewTable(store);
    const t = loaded?.table as ViewTable;
    const rootSidecar = toSidecar(
      { name: "default", namespace: "mesh-root" },
      { egress: [{ hosts: ["./*"] }] },
    );
    await saveViewTable(store, { ...t, sidecars: [...t.sidecars, rootSidecar] }, loaded?.head);
    const seen = async () => {
      const views = createViews({ store });
      return versions(await views.source(await views.forNamespace("c"), base).list(RDS));
    };
    // mesh-root is no root namespace: c has no Sidecar, it sees every route.
    expect(await seen()).toEqual([`${route("a")}@shared`, `${route("b")}@shared`, `${route("c")}@shared`]);
    await store.put(keys.meshConfig(), {
      model: { rootNamespace: "mesh-root" },
      unsupported: [],
      source: "test",
    });
    expect(await seen()).toEqual([`${route("c")}@shared`]);
  });
});
