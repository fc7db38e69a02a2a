import { describe, expect, it } from "vitest";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { type DeltaSubscription, diffForClient } from "../../../lib/xds/delta-diff.ts";
import type { ResourceSource } from "../../../lib/xds/source.ts";

const CDS = TypeUrl.cluster;
const res = (name: string, version: string): StoredResource => ({
  typeUrl: CDS,
  name,
  version,
  body: new Uint8Array([1]),
  service: "ns/host",
});
const source = (...rs: StoredResource[]): ResourceSource => ({
  get: async (_t, names) => rs.filter((r) => names.includes(r.name)),
  list: async () => [...rs],
});
const sub = (names: string[], wildcard = false): DeltaSubscription => ({ wildcard, names: new Set(names) });
const held = (o: Record<string, string>) => new Map(Object.entries(o));

describe("diffForClient", () => {
  const cases: {
    name: string;
    store: StoredResource[];
    sub: DeltaSubscription;
    held: Record<string, string>;
    want: { resources: string[]; removed: string[]; missing: string[] };
  }[] = [
    {
      name: "a new client gets everything it subscribed to",
      store: [res("a", "1"), res("b", "1"), res("c", "1")],
      sub: sub(["a", "b"]),
      held: {},
      want: { resources: ["a", "b"], removed: [], missing: [] },
    },
    {
      name: "held at the current version: nothing",
      store: [res("a", "1"), res("b", "2")],
      sub: sub(["a", "b"]),
      held: { a: "1", b: "2" },
      want: { resources: [], removed: [], missing: [] },
    },
    {
      name: "a changed version is sent",
      store: [res("a", "1"), res("b", "3")],
      sub: sub(["a", "b"]),
      held: { a: "1", b: "2" },
      want: { resources: ["b"], removed: [], missing: [] },
    },
    {
      name: "held but gone ▶ removed",
      store: [res("a", "1")],
      sub: sub(["a", "b"]),
      held: { a: "1", b: "2" },
      want: { resources: [], removed: ["b"], missing: [] },
    },
    {
      name: "subscribed, never existed, not held ▶ missing",
      store: [res("a", "1")],
      sub: sub(["a", "zz"]),
      held: { a: "1" },
      want: { resources: [], removed: [], missing: ["zz"] },
    },
    {
      name: "held but unsubscribed: ignored",
      store: [res("a", "1")],
      sub: sub(["a"]),
      held: { a: "1", old: "9" },
      want: { resources: [], removed: [], missing: [] },
    },
    {
      name: "wildcard reaches everything, and removes what vanished",
      store: [res("a", "1"), res("c", "1")],
      sub: sub([], true),
      held: { a: "1", b: "1" },
      want: { resources: ["c"], removed: ["b"], missing: [] },
    },
    {
      name: "wildcard plus an explicit name that does not exist",
      store: [res("a", "1")],
      sub: sub(["nope"], true),
      held: {},
      want: { resources: ["a"], removed: [], missing: ["nope"] },
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const d = await diffForClient(source(...c.store), CDS, c.sub, held(c.held));
      expect({ resources: d.resources.map((r) => r.name), removed: d.removed, missing: d.missing }).toEqual(
        c.want,
      );
    });
  }
});
