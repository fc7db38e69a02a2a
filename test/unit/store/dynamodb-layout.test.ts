/**
 * The DynamoDB key layout (lib/store/dynamodb-layout.ts), pure: every prefix the code lists on a
 * hot path is one partition (one Query), the families written most get a partition per service,
 * namespace or cluster, and the prefixes shorter than their partitions are the few listed only by
 * debug endpoints, metrics, a resync or a migration.
 */
import { describe, expect, it } from "vitest";
import { itemKey, listPlan, partitionOf, storeKeyOf } from "../../../lib/store/dynamodb-layout.ts";
import { keys } from "../../../lib/store/keys.ts";

const cla = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";

describe("dynamodb key layout", () => {
  const onePartition: [string, string, string][] = [
    ["every service (flush, views)", keys.services(), "svc/"],
    ["one service's records", keys.servicePrefix("ns", "h"), "svc/"],
    ["one namespace's services", keys.servicesIn("ns"), "svc/"],
    ["one shard's pieces", keys.slicePrefix("ns", "h", "c1"), "eps/ns/h/c1/"],
    ["one type's resources", keys.resourcePrefix(cla), `xds/${cla}/`],
    ["one kind's configs", keys.configPrefix("VirtualService"), "cfg/VirtualService/"],
    ["one kind's configs in a namespace", keys.configsIn("ServiceEntry", "ns"), "cfg/ServiceEntry/"],
    ["one namespace's pods", keys.podsIn("c1", "ns"), "pod/c1/ns/"],
    ["the slices of one node", keys.refPrefix("node", "c1", "n1"), "ref/node/c1/n1/"],
    ["queued pushes", keys.pendingPrefix(), "push/pending/"],
    ["proxy records", keys.proxyPrefix(), "proxy/"],
    ["what services generated", "gen/", "gen/"],
    ["one namespace's shards", keys.shardsIn("ns"), "shard/ns/"],
  ];
  for (const [what, prefix, part] of onePartition)
    it(`lists ${what} with one Query of partition ${part}`, () => {
      expect(listPlan(prefix)).toEqual({
        kind: "one",
        pk: `=${part}`,
        skPrefix: `=${prefix.slice(part.length)}`,
      });
    });

  const walked: [string, string][] = [
    ["every shard (debug, inventory gauges)", keys.allShards()],
    ["one kind's object records (a resync)", keys.objectPrefix("c1", "Pod")],
    ["every config (debug)", keys.configs()],
    ["the per-key pod refs (a migration)", keys.refsOn("pod")],
    ["everything", ""],
  ];
  for (const [what, prefix] of walked)
    it(`walks the directory for ${what}`, () => {
      expect(listPlan(prefix)).toEqual({ kind: "walk", dirPrefix: `=${prefix}` });
    });

  it("spreads the families written most: a partition per shard piece set, namespace, object namespace", () => {
    expect(partitionOf(keys.slice("ns", "h", "c1", "s1"))).toEqual({ part: "eps/ns/h/c1/", full: true });
    expect(partitionOf(keys.shards("ns", "h"))).toEqual({ part: "shard/ns/", full: true });
    expect(partitionOf(keys.object("c1", "EndpointSlice", "ns", "s1"))).toEqual({
      part: "obj/c1/EndpointSlice/ns/",
      full: true,
    });
    expect(partitionOf(keys.object("c1", "Node", "", "n1"))).toEqual({ part: "obj/c1/Node/_/", full: true });
    expect(partitionOf(keys.resource(cla, "outbound|80||h"))).toEqual({ part: `xds/${cla}/`, full: true });
  });

  it("keys with fewer segments than their family's partitions are partitions of their own", () => {
    expect(partitionOf(keys.flushing())).toEqual({ part: "push/flushing", full: false });
    expect(partitionOf("eps/ns/")).toEqual({ part: "eps/ns/", full: false });
    expect(partitionOf("")).toEqual({ part: "", full: false });
  });

  it("maps every key to a table key and back, the empty key included", () => {
    for (const key of [
      "",
      "a",
      "svc/ns/h/c",
      keys.slice("ns", "h", "c", "s"),
      keys.flushing(),
      "x/\u{1f600}/",
    ]) {
      const { pk, sk } = itemKey(key);
      expect(pk.length).toBeGreaterThan(0);
      expect(sk.length).toBeGreaterThan(0);
      expect(storeKeyOf(pk, sk)).toBe(key);
    }
  });
});
