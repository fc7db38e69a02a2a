import { describe, expect, it } from "vitest";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { decodeSegment, keys, segment } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { listAll } from "../../../lib/store/store.ts";

/** Names an attacker might try to smuggle into a key segment. */
const hostile = [
  "a/b",
  "../default",
  "..",
  ".",
  "_",
  "a%2Fb",
  "%",
  "%25",
  "x\u0000y",
  "line\nbreak",
  "a\u007f",
  "reviews/default/east/other-slice",
  "",
];

describe("keys: a valid name's key is the plain join", () => {
  const cases: [string, string, string][] = [
    [
      "service",
      keys.service("bookinfo", "reviews.bookinfo.svc.cluster.local", "east"),
      "svc/bookinfo/reviews.bookinfo.svc.cluster.local/east",
    ],
    [
      "ServiceEntry's record of a host, beside the Kubernetes one",
      keys.externalService("bookinfo", "reviews.bookinfo.svc.cluster.local", "east", "reviews-vm"),
      "svc/bookinfo/reviews.bookinfo.svc.cluster.local/east~reviews-vm",
    ],
    ["configs of a kind in a namespace", keys.configsIn("ServiceEntry", "shop"), "cfg/ServiceEntry/shop/"],
    [
      "slice",
      keys.slice("bookinfo", "r.bookinfo.svc.cluster.local", "east", "r-8x7kq"),
      "eps/bookinfo/r.bookinfo.svc.cluster.local/east/r-8x7kq",
    ],
    ["object, namespaced", keys.object("east", "Pod", "bookinfo", "p-1"), "obj/east/Pod/bookinfo/p-1"],
    ["object, cluster-scoped", keys.object("east", "Node", "", "worker-a"), "obj/east/Node/_/worker-a"],
    ["pod ip v6", keys.podIp("east", "fd00:10:244:1::c"), "podip/east/fd00:10:244:1::c"],
    [
      "pod ref",
      keys.ref("pod", "east", "bookinfo/reviews-v1", "bookinfo", "r.bookinfo.svc.cluster.local", "s"),
      "ref/pod/east/bookinfo/reviews-v1/bookinfo/r.bookinfo.svc.cluster.local/s",
    ],
    ["node ref prefix", keys.refPrefix("node", "east", "worker-a"), "ref/node/east/worker-a/"],
    ["pod refs, every cluster", keys.refsOn("pod"), "ref/pod/"],
    ["ref bucket, ip", keys.refBucket("ip", "east", "10.244.1", 0), "refs/ip/east/10.244.1/0"],
    [
      "ref bucket, pod",
      keys.refBucket("pod", "east", "bookinfo/reviews-v1", 2),
      "refs/pod/east/bookinfo%2Freviews-v1/2",
    ],
    [
      "resource",
      keys.resource(TypeUrl.endpoint, "outbound|9080||r.bookinfo.svc.cluster.local"),
      `xds/${TypeUrl.endpoint}/outbound|9080||r.bookinfo.svc.cluster.local`,
    ],
    [
      "proxy",
      keys.proxy("sidecar~10.0.0.1~p.ns~ns.svc.cluster.local"),
      "proxy/sidecar~10.0.0.1~p.ns~ns.svc.cluster.local",
    ],
  ];
  for (const [name, got, want] of cases) it(name, () => expect(got).toBe(want));
});

describe("keys: no input can forge another key", () => {
  it("segment is injective, never holds '/', and decodes back", () => {
    const encoded = hostile.map(segment);
    expect(new Set(encoded).size).toBe(hostile.length);
    for (const [i, s] of encoded.entries()) {
      expect(s).not.toContain("/");
      expect([...s].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)).toBe(false);
      expect(s === "." || s === ".." || s === "_").toBe(false);
      if (hostile[i] !== "_" && hostile[i] !== "." && hostile[i] !== "..")
        expect(decodeSegment(s)).toBe(hostile[i]);
    }
  });

  it("a slice named after another service's key lands under its own service's prefix", async () => {
    const store = createMemoryStore();
    const host = "reviews.bookinfo.svc.cluster.local";
    for (const name of hostile) await store.put(keys.slice("bookinfo", host, "east", name), { name });
    // A victim service next door, with one piece of its own.
    await store.put(keys.slice("default", "victim.default.svc.cluster.local", "east", "v-1"), {
      name: "v-1",
    });
    const own = await listAll<{ name: string }>(store, keys.slicePrefix("bookinfo", host, "east"));
    expect(own.map((e) => e.value.name).sort()).toEqual([...hostile].sort());
    const victim = await listAll<{ name: string }>(
      store,
      keys.slicePrefix("default", "victim.default.svc.cluster.local", "east"),
    );
    expect(victim.map((e) => e.value.name)).toEqual(["v-1"]);
    // Each key is exactly one segment below the prefix.
    for (const e of own)
      expect(e.key.slice(keys.slicePrefix("bookinfo", host, "east").length)).not.toContain("/");
  });

  it("namespaces, clusters and hosts with separators stay inside their own prefix", () => {
    for (const bad of hostile) {
      expect(keys.service(bad, "h", "c").startsWith(keys.servicePrefix("ns", "h"))).toBe(bad === "ns");
      expect(keys.service("ns", bad, "c").startsWith(keys.servicePrefix("ns", bad))).toBe(true);
      expect(keys.service("ns", bad, "c").startsWith(keys.servicesIn("ns"))).toBe(true);
      expect(keys.pod(bad, "ns", "p").startsWith("pod/east/")).toBe(false);
      expect(keys.object("east", "Pod", "ns", bad).startsWith(keys.objectPrefix("east", "Pod"))).toBe(true);
      expect(keys.object("east", bad, "ns", "p").startsWith(keys.objectPrefix("east", "Pod"))).toBe(false);
    }
    // The cluster-scoped marker cannot be claimed by a namespace named "_".
    expect(keys.object("east", "Node", "_", "n")).not.toBe(keys.object("east", "Node", "", "n"));
  });

  it("a reverse-index bucket's parts never share a key with another bucket's", () => {
    const buckets = ["ns/a", "ns/a/b", "ns/a%2Fb", "ns%2Fa/b", "ns/a\u0000", "ns/..", "ns/a/0"];
    const parts = buckets.flatMap((b) => [0, 1, 10].map((n) => keys.refBucket("pod", "east", b, n)));
    expect(new Set(parts).size).toBe(parts.length);
  });

  it("a resource name with '/' cannot reach another type's resources", () => {
    const forged = keys.resource("type.googleapis.com", "envoy.config.endpoint.v3.ClusterLoadAssignment/x");
    expect(forged.startsWith(keys.resourcePrefix(TypeUrl.endpoint))).toBe(false);
    expect(keys.resource(TypeUrl.endpoint, "../x").startsWith(keys.resourcePrefix(TypeUrl.endpoint))).toBe(
      true,
    );
  });
});
