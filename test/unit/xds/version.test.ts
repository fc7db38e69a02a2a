import { create, toBinary } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { nodeSha256 } from "../../../functions/node/sha256.ts";
import { ClusterSchema } from "../../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import { RouterSchema } from "../../../lib/gen/envoy/extensions/filters/http/router/v3/router_pb.ts";
import { TypeUrl } from "../../../lib/xds/types.ts";
import {
  resourceVersion,
  serviceRef,
  setVersion,
  toStored,
  useSyncSha256,
} from "../../../lib/xds/version.ts";

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

  it("refuses a message that is no served resource type", async () => {
    const message = create(RouterSchema);
    await expect(toStored({ name: "r", schema: RouterSchema, message }, "ns/x")).rejects.toThrow(
      /not a served type URL/,
    );
  });

  it("names the service as <namespace>/<hostname>", () => {
    expect(serviceRef({ namespace: "ns", hostname: "a.ns.svc.cluster.local" })).toBe(
      "ns/a.ns.svc.cluster.local",
    );
  });
});
