import { create, toBinary } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { nodeSha256 } from "../../../functions/node/sha256.ts";
import { ClusterSchema } from "../../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import { RouterSchema } from "../../../lib/gen/envoy/extensions/filters/http/router/v3/router_pb.ts";
import {
  createSetDigest,
  createVersionMap,
  resourceVersion,
  serviceRef,
  setVersion,
  toStored,
  useSyncSha256,
} from "../../../lib/resources/version.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { seededInt } from "../../fixtures/seeded.ts";

const text = (s: string) => new TextEncoder().encode(s);

describe("resourceVersion", () => {
  it("is the hex of the first 8 bytes of SHA-256", async () => {
    // SHA-256("abc") = ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
    expect(await resourceVersion(text("abc"))).toBe("ba7816bf8f01cfea");
  });

  it("hashes only the bytes a view covers", async () => {
    const view = new Uint8Array(text("xabcx").buffer, 1, 3);
    expect(await resourceVersion(view)).toBe("ba7816bf8f01cfea");
  });
});

describe("useSyncSha256", () => {
  afterEach(() => useSyncSha256(undefined));
  const bodies = [
    { what: "empty", bytes: new Uint8Array(0) },
    { what: "abc", bytes: text("abc") },
    { what: "a view", bytes: new Uint8Array(text("xabcx").buffer, 1, 3) },
    { what: "64 KiB", bytes: Uint8Array.from({ length: 65536 }, (_, i) => (i * 31) & 255) },
  ];

  it.each(bodies)("gives the WebCrypto version for $what", async ({ bytes }) => {
    const web = await resourceVersion(bytes);
    const webSet = await setVersion([{ name: "n", version: web }]);
    useSyncSha256(nodeSha256);
    expect(await resourceVersion(bytes)).toBe(web);
    expect(await setVersion([{ name: "n", version: web }])).toBe(webSet);
  });

  it("is used when injected", async () => {
    useSyncSha256(() => new Uint8Array(32).fill(0xab));
    expect(await resourceVersion(text("abc"))).toBe("abababababababab");
  });
});

describe("setVersion", () => {
  const a = { name: "a", version: "1111" };
  const b = { name: "b", version: "2222" };

  it("ignores input order", async () => {
    expect(await setVersion([a, b])).toBe(await setVersion([b, a]));
  });

  const changes = [
    { name: "a version changes", other: [{ ...a, version: "9999" }, b] },
    { name: "a name changes", other: [{ ...a, name: "c" }, b] },
    { name: "a resource is missing", other: [a] },
    { name: "the set is empty", other: [] },
    { name: "name and version boundaries move", other: [{ name: "a1", version: "111" }, b] },
  ];
  for (const c of changes) {
    it(`changes when ${c.name}`, async () => {
      expect(await setVersion(c.other)).not.toBe(await setVersion([a, b]));
    });
  }

  it("gives the empty set a stable version", async () => {
    expect(await setVersion([])).toMatch(/^[0-9a-f]{16}$/);
    expect(await setVersion([])).toBe(await setVersion([]));
  });
});

describe("setVersion's definition", () => {
  afterEach(() => useSyncSha256(undefined));

  it("is the sum mod 2^64 of the first 8 bytes of SHA-256 of each JSON [name, version]", async () => {
    const pairs = [
      ["outbound|9080||a.ns.svc.cluster.local", "0123456789abcdef"],
      ["b", "v"],
      ['ü \u0000 "quoted"', ""],
    ] as const;
    let sum = 0n;
    for (const [name, version] of pairs) {
      const bytes = new TextEncoder().encode(JSON.stringify([name, version]));
      const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
      sum += new DataView(digest.buffer).getBigUint64(0);
    }
    const want = (sum & ((1n << 64n) - 1n)).toString(16).padStart(16, "0");
    expect(await setVersion(pairs.map(([name, version]) => ({ name, version })))).toBe(want);
    expect(await setVersion([])).toBe("0000000000000000");
  });
});

describe("incremental set versions", () => {
  afterEach(() => useSyncSha256(undefined));
  const hashes = [
    { what: "WebCrypto", sha: undefined },
    { what: "node:crypto (sync)", sha: nodeSha256 },
  ];

  it.each(
    hashes,
  )("a VersionMap's version equals setVersion of its entries after random adds, changes and removals ($what)", async ({
    sha,
  }) => {
    useSyncSha256(sha);
    const random = seededInt(8);
    const map = createVersionMap();
    const model = new Map<string, string>();
    for (let step = 0; step < 400; step++) {
      const name = `n${random(40)}`;
      const op = random(3);
      if (op === 0) {
        map.delete(name);
        model.delete(name);
      } else {
        const version = `v${random(4)}`; // small range: versions come back, pairs repeat
        map.set(name, version);
        model.set(name, version);
      }
      if (step % 7 === 0 || step === 399) {
        const want = await setVersion([...model].map(([n, v]) => ({ name: n, version: v })));
        expect(await map.version(), `step ${step}`).toBe(want);
        expect([...map].sort()).toEqual([...model].sort());
      }
    }
  });

  it("gives the same strings with node:crypto and WebCrypto, for maps built in any order", async () => {
    const entries = Array.from({ length: 50 }, (_, i) => [`name-${i}`, `v${i % 3}`] as const);
    const web = await createVersionMap(entries).version();
    useSyncSha256(nodeSha256);
    const sync = await createVersionMap([...entries].reverse()).version();
    expect(sync).toBe(web);
    expect(await setVersion(entries.map(([name, version]) => ({ name, version })))).toBe(web);
  });

  it("answers each version() with the set as it was when called, even while WebCrypto is hashing", async () => {
    const digest = createSetDigest();
    digest.add("a", "1");
    const one = digest.version();
    digest.add("b", "2");
    const two = digest.version();
    digest.remove("a", "1");
    const three = digest.version();
    expect(await one).toBe(await setVersion([{ name: "a", version: "1" }]));
    expect(await two).toBe(
      await setVersion([
        { name: "a", version: "1" },
        { name: "b", version: "2" },
      ]),
    );
    expect(await three).toBe(await setVersion([{ name: "b", version: "2" }]));
  });

  it("a pair that leaves and comes back counts once (a sum, not an XOR)", async () => {
    const map = createVersionMap([["a", "1"]]);
    map.set("a", "2");
    map.set("a", "1");
    map.set("b", "1");
    map.delete("b");
    expect(await map.version()).toBe(await setVersion([{ name: "a", version: "1" }]));
  });
});

describe("toStored", () => {
  it("serializes with toBinary and stamps the content hash", async () => {
    const message = create(ClusterSchema, { name: "outbound|80||a.ns.svc.cluster.local" });
    const stored = await toStored(
      { name: message.name, schema: ClusterSchema, message },
      "ns/a.ns.svc.cluster.local",
    );
    const body = toBinary(ClusterSchema, message);
    expect(stored).toEqual({
      typeUrl: TypeUrl.cluster,
      name: message.name,
      version: await resourceVersion(body),
      body,
      service: "ns/a.ns.svc.cluster.local",
    });
  });

  it("refuses a message that is no served resource type", () => {
    const message = create(RouterSchema);
    expect(() => toStored({ name: "r", schema: RouterSchema, message }, "ns/x")).toThrow(
      /not a served type URL/,
    );
  });

  it("with a synchronous SHA-256 answers at once, with the version WebCrypto gives", async () => {
    const message = create(ClusterSchema, { name: "outbound|80||a.ns.svc.cluster.local" });
    const generated = { name: message.name, schema: ClusterSchema, message };
    const web = await toStored(generated, "ns/a");
    expect(web).toBeDefined();
    useSyncSha256(nodeSha256);
    try {
      const now = toStored(generated, "ns/a");
      expect(now).not.toBeInstanceOf(Promise);
      expect(now).toEqual(web);
    } finally {
      useSyncSha256(undefined);
    }
  });

  it("names the service as <namespace>/<hostname>", () => {
    expect(serviceRef({ namespace: "ns", hostname: "a.ns.svc.cluster.local" })).toBe(
      "ns/a.ns.svc.cluster.local",
    );
  });
});
