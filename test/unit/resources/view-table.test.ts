/**
 * Which namespaces get a view of their own, and what a view may see: table-driven over ViewTables
 * built from real Sidecar specs (toSidecar) and service exportTo lists.
 */
import { describe, expect, it } from "vitest";
import { toSidecar } from "../../../lib/registry/istio/sidecar.ts";
import {
  emptyViewTable,
  resolveView,
  routedToChanged,
  type ViewTable,
} from "../../../lib/resources/view-table.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";

const root = "istio-system";
const sidecar = (namespace: string, hosts: string[], o: { selector?: boolean; created?: string } = {}) =>
  toSidecar(
    {
      name: "default",
      namespace,
      ...(o.created !== undefined && { creationTimestamp: o.created }),
    },
    { egress: [{ hosts }], ...(o.selector && { workloadSelector: { labels: { app: "x" } } }) },
  );
const table = (o: Partial<ViewTable> = {}): ViewTable => ({ ...emptyViewTable(), ...o });
const overlay = (names: string[], hidden: string[] = []) => ({
  [TypeUrl.route]: { names, versions: names.map(() => "v"), hidden },
});

describe("resolveView: which namespaces get a view of their own", () => {
  const cases: { name: string; table: ViewTable; own: string[]; shared: string[] }[] = [
    {
      name: "nothing per namespace: every namespace shares",
      table: table(),
      own: [],
      shared: ["a", "b", ""],
    },
    {
      name: "a namespace's Sidecar: that namespace only",
      table: table({ sidecars: [sidecar("a", ["./*"])] }),
      own: ["a"],
      shared: ["b", root],
    },
    {
      name: "the root namespace's Sidecar is the mesh default: every namespace",
      table: table({ sidecars: [sidecar(root, ["./*", `${root}/*`])] }),
      own: ["a", "b", root],
      shared: [""],
    },
    {
      name: "overlays stored for a namespace",
      table: table({ overlays: { a: { "a/r.a.svc.cluster.local": overlay(["r.a.svc.cluster.local:80"]) } } }),
      own: ["a"],
      shared: ["b"],
    },
    {
      name: 'a service exported to "." : every other namespace, not its own',
      table: table({ exports: { "a/r.a.svc.cluster.local": ["."] } }),
      own: ["b", "c"],
      shared: ["a"],
    },
    {
      name: "a service exported to a list: the namespaces not listed",
      table: table({ exports: { "a/r.a.svc.cluster.local": [".", "b"] } }),
      own: ["c"],
      shared: ["a", "b"],
    },
    {
      name: 'a service exported to "~": every namespace, its own too',
      table: table({ exports: { "a/r.a.svc.cluster.local": ["~"] } }),
      own: ["a", "b"],
      shared: [""],
    },
  ];
  it.each(cases)("$name", ({ table: t, own, shared }) => {
    for (const ns of own) expect(resolveView(t, ns, root).key, ns).toBe(ns);
    for (const ns of shared) expect(resolveView(t, ns, root).key, ns).toBe("");
  });
});

describe("resolveView: what a view may see", () => {
  const svc = (ns: string, name: string) => `${ns}/${name}.${ns}.svc.cluster.local`;
  const cases: { name: string; table: ViewTable; ns: string; sees: string[]; hides: string[] }[] = [
    {
      name: 'egress "./*": its own namespace only',
      table: table({ sidecars: [sidecar("a", ["./*"])] }),
      ns: "a",
      sees: [svc("a", "r")],
      hides: [svc("b", "r")],
    },
    {
      name: 'egress "*/<host>": that host in any namespace',
      table: table({ sidecars: [sidecar("a", ["*/r.b.svc.cluster.local"])] }),
      ns: "a",
      sees: [svc("b", "r")],
      hides: [svc("a", "r"), svc("b", "s")],
    },
    {
      name: 'egress "b/*.b.svc.cluster.local": a wildcard host of one namespace',
      table: table({ sidecars: [sidecar("a", ["b/*.b.svc.cluster.local"])] }),
      ns: "a",
      sees: [svc("b", "r"), svc("b", "s")],
      hides: [svc("c", "r")],
    },
    {
      name: 'egress "~/*": nothing',
      table: table({ sidecars: [sidecar("a", ["~/*"])] }),
      ns: "a",
      sees: [],
      hides: [svc("a", "r"), svc("b", "r")],
    },
    {
      name: "the oldest namespace Sidecar wins over the root's; one with a selector is not applied",
      table: table({
        sidecars: [
          sidecar(root, ["*/*"]),
          sidecar("a", ["./*"], { created: "2024-01-01T00:00:00Z" }),
          sidecar("a", ["b/*"], { created: "2024-02-01T00:00:00Z" }),
          sidecar("a", ["c/*"], { selector: true }),
        ].map((s, i) => ({ ...s, name: `s${i}` })),
      }),
      ns: "a",
      sees: [svc("a", "r")],
      hides: [svc("b", "r"), svc("c", "r")],
    },
    {
      name: "the services an imported VirtualService routes to, beyond the egress hosts",
      table: table({
        sidecars: [sidecar("a", ["b/*"])],
        virtualServices: [
          { namespace: "b", hosts: ["r.b.svc.cluster.local"], destinations: ["s.c.svc.cluster.local"] },
        ],
      }),
      ns: "a",
      sees: [svc("b", "r"), svc("c", "s")],
      hides: [svc("c", "t")],
    },
    {
      name: "a VirtualService the Sidecar does not import adds none of its destinations",
      table: table({
        sidecars: [sidecar("a", ["b/*"])],
        virtualServices: [
          { namespace: "d", hosts: ["r.b.svc.cluster.local"], destinations: ["s.c.svc.cluster.local"] },
        ],
      }),
      ns: "a",
      sees: [svc("b", "r")],
      hides: [svc("c", "s")],
    },
    {
      name: "nor one not exported to the namespace; nor a destination not exported to it",
      table: table({
        sidecars: [sidecar("a", ["b/*"])],
        virtualServices: [
          {
            namespace: "b",
            hosts: ["r.b.svc.cluster.local"],
            exportTo: ["."],
            destinations: ["s.c.svc.cluster.local"],
          },
          { namespace: "b", hosts: ["q.b.svc.cluster.local"], destinations: ["t.c.svc.cluster.local"] },
        ],
        exports: { [svc("c", "t")]: ["."] },
      }),
      ns: "a",
      sees: [svc("b", "r")],
      hides: [svc("c", "s"), svc("c", "t")],
    },
    {
      name: "a Sidecar and an exportTo together: both must allow it",
      table: table({ sidecars: [sidecar("a", ["*/*"])], exports: { [svc("b", "r")]: ["."] } }),
      ns: "a",
      sees: [svc("b", "s")],
      hides: [svc("b", "r")],
    },
  ];
  it.each(cases)("$name", ({ table: t, ns, sees, hides }) => {
    const v = resolveView(t, ns, root);
    const visible = v.visible ?? (() => true);
    for (const s of sees) expect(visible(s), s).toBe(true);
    for (const s of hides) expect(visible(s), s).toBe(false);
  });

  it("overlay and hidden names come from every service's overlay record of the view", () => {
    const t = table({
      overlays: {
        a: { "a/r": overlay(["r:80"], ["r:81"]), "a/s": overlay(["s:80"]) },
        b: { "a/r": overlay(["x:80"]) },
      },
    });
    const v = resolveView(t, "a", root);
    expect([...(v.overlay(TypeUrl.route) ?? [])].sort()).toEqual(["r:80", "s:80"]);
    expect([...(v.hidden(TypeUrl.route) ?? [])]).toEqual(["r:81"]);
    expect(v.overlay(TypeUrl.cluster)).toBeUndefined();
    expect(v.visible).toBeNull();
  });
});

describe("routedToChanged: which views a VirtualService change marks", () => {
  const vs = (namespace: string, destinations: string[]) => ({
    namespace,
    hosts: [`r.${namespace}.svc.cluster.local`],
    destinations,
  });
  const cases: { name: string; was: ViewTable; next: ViewTable; want: string[] }[] = [
    {
      name: "the same records: none",
      was: table({
        sidecars: [sidecar("a", ["b/*"])],
        virtualServices: [vs("b", ["s.c.svc.cluster.local"])],
      }),
      next: table({
        sidecars: [sidecar("a", ["b/*"])],
        virtualServices: [vs("b", ["s.c.svc.cluster.local"])],
      }),
      want: [],
    },
    {
      name: "a destination added to a VirtualService a namespace's Sidecar imports: that namespace",
      was: table({
        sidecars: [sidecar("a", ["b/*"]), sidecar("d", ["./*"])],
        virtualServices: [vs("b", [])],
      }),
      next: table({
        sidecars: [sidecar("a", ["b/*"]), sidecar("d", ["./*"])],
        virtualServices: [vs("b", ["s.c.svc.cluster.local"])],
      }),
      want: ["a"],
    },
    {
      name: "a VirtualService no Sidecar imports: none",
      was: table({ sidecars: [sidecar("a", ["./*"])] }),
      next: table({
        sidecars: [sidecar("a", ["./*"])],
        virtualServices: [vs("b", ["s.c.svc.cluster.local"])],
      }),
      want: [],
    },
    {
      name: "under the root namespace's Sidecar: every namespace",
      was: table({ sidecars: [sidecar(root, ["*/*"])] }),
      next: table({
        sidecars: [sidecar(root, ["*/*"])],
        virtualServices: [vs("b", ["s.c.svc.cluster.local"])],
      }),
      want: ["*"],
    },
  ];
  it.each(cases)("$name", ({ was, next, want }) => expect(routedToChanged(was, next, root)).toEqual(want));
});
