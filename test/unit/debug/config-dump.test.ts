import { create, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { compareType, readConfigDump } from "../../../lib/debug/config-dump.ts";
import { proxyDiff } from "../../../lib/debug/proxy-diff.ts";
import { ClusterSchema } from "../../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { createViews } from "../../../lib/xds/view-source.ts";
import { NODE, NOW, record, recordType } from "./builders.ts";

const published = (name: string, version: string): StoredResource => ({
  typeUrl: TypeUrl.cluster,
  name,
  version,
  body: toBinary(ClusterSchema, create(ClusterSchema, { name })),
  service: "default/reviews",
});
const sent = (versions: Record<string, string>, v = "s1") => ({ versionInfo: v, nonce: "n", versions });

describe("compareType", () => {
  it.each([
    {
      name: "all published at the sent version",
      now: { a: "1", b: "2" },
      want: [
        ["a", "1", "1"],
        ["b", "2", "2"],
      ],
    },
    {
      name: "one changed since",
      now: { a: "1", b: "3" },
      want: [
        ["a", "1", "1"],
        ["b", "2", "3"],
      ],
    },
    {
      name: "one gone",
      now: { a: "1" },
      want: [
        ["a", "1", "1"],
        ["b", "2", null],
      ],
    },
  ])("$name", ({ now, want }) => {
    const t = recordType({ sent: sent({ a: "1", b: "2" }), sentCount: 2 });
    const map = new Map(Object.entries(now).map(([n, v]) => [n, published(n, v)]));
    expect(compareType(t, map).resources.map((r) => [r.name, r.sent, r.published])).toEqual(want);
  });
});

describe("readConfigDump", () => {
  it("renders what was sent as Envoy's ClustersConfigDump, only at the sent version", async () => {
    const store = createMemoryStore();
    await store.put(keys.resource(TypeUrl.cluster, "a"), published("a", "1"));
    await store.put(keys.resource(TypeUrl.cluster, "b"), published("b", "9"));
    await store.put(
      keys.proxy(NODE),
      // A proxyless client's record (GENERATOR=grpc): its dump compares the proxyless set.
      record({ generator: "grpc" }, [
        recordType({ sent: sent({ a: "1", b: "2" }), sentCount: 2, ackedVersion: "s1" }),
      ]),
    );
    const r = await readConfigDump(store, createViews({ store }), { proxyID: NODE, now: NOW });
    if (!r.ok) throw new Error(r.error);
    expect(r.dump.configs).toEqual([
      {
        "@type": "type.googleapis.com/envoy.admin.v3.ClustersConfigDump",
        version_info: "s1",
        dynamic_active_clusters: [{ version_info: "1", cluster: { "@type": TypeUrl.cluster, name: "a" } }],
      },
    ]);
    expect(r.dump.edgepilot).toMatchObject({ proxy: NODE, view: "(shared)" });
    expect(proxyDiff(NODE, r.dump.edgepilot.types)).toBe(
      `Proxy ${NODE}\nClusters Don't Match\n  ~ b: sent 2, published 9\n`,
    );
  });

  it.each([
    { name: "no record", put: false, expiresAt: 0 },
    { name: "an expired record", put: true, expiresAt: NOW - 1 },
  ])("answers why there is no dump: $name", async ({ put, expiresAt }) => {
    const store = createMemoryStore();
    if (put) await store.put(keys.proxy(NODE), record({ expiresAt }));
    const r = await readConfigDump(store, createViews({ store }), { proxyID: NODE, now: NOW });
    expect(r).toEqual({ ok: false, error: expect.stringMatching(/no live status record/) });
  });
});

describe("proxyDiff", () => {
  const type = (o: object) => ({ type_url: TypeUrl.cluster, sent_count: 1, resources: [], ...o });
  it.each([
    { name: "not sent", t: type({}), want: "Clusters Not Sent" },
    {
      name: "match",
      t: type({
        version_sent: "1",
        version_acked: "1",
        resources: [{ name: "a", sent: "1", published: "1" }],
      }),
      want: "Clusters Match",
    },
    {
      name: "NACKed",
      t: type({
        sent_count: 0,
        version_sent: "2",
        version_acked: "1",
        nack: { nonce: "n", version_info: "1", message: "no" },
      }),
      want: "Clusters Don't Match\n  ! NACKed (kept 1): no",
    },
    {
      name: "gone, and more sent than the record lists",
      t: type({ version_sent: "1", sent_count: 40, resources: [{ name: "a", sent: "1", published: null }] }),
      want: "Clusters Don't Match (compared the first 1 of 40 resources sent)\n  - a: sent 1, no longer published",
    },
  ])("$name", ({ t, want }) => {
    expect(proxyDiff("p", [t])).toBe(`Proxy p\n${want}\n`);
  });
});
