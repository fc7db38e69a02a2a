import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { NodeSchema } from "../../../lib/gen/envoy/config/core/v3/base_pb.ts";
import {
  DiscoveryRequestSchema,
  type DiscoveryResponse,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { StatusSchema } from "../../../lib/gen/google/rpc/status_pb.ts";
import type { ProxyStatus, StoredResource } from "../../../lib/resources/types.ts";
import { setVersion } from "../../../lib/resources/version.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { nodeGenerator } from "../../../lib/xds/node-meta.ts";
import { createSotwSession } from "../../../lib/xds/sotw.ts";
import { createStoreSource, type ResourceSource } from "../../../lib/xds/source.ts";

const { listener: LDS, route: RDS, cluster: CDS, endpoint: EDS } = TypeUrl;

/** A session over an in-memory store, with counting nonces and recorded statuses. */
function harness(source?: ResourceSource) {
  const store = createMemoryStore();
  const statuses: ProxyStatus[] = [];
  let n = 0;
  const session = createSotwSession({
    source: source ?? createStoreSource(store),
    nonce: () => `n${++n}`,
    onStatus: (s) => statuses.push(typeof s === "function" ? s() : s),
  });
  const publish = async (typeUrl: TypeUrl, name: string, version = "v1") => {
    const r: StoredResource = {
      typeUrl,
      name,
      version,
      body: new TextEncoder().encode(`${name}@${version}`),
      service: "ns/h",
    };
    await store.put(keys.resource(typeUrl, name), r);
  };
  const remove = (typeUrl: TypeUrl, name: string) => store.delete(keys.resource(typeUrl, name));
  return { session, store, statuses, publish, remove };
}

const req = (o: MessageInitShape<typeof DiscoveryRequestSchema> & { typeUrl: string }) =>
  create(DiscoveryRequestSchema, o);
const ack = (r: DiscoveryResponse | undefined, names: string[] = []) =>
  req({
    typeUrl: r?.typeUrl ?? "",
    versionInfo: r?.versionInfo ?? "",
    responseNonce: r?.nonce ?? "",
    resourceNames: names,
  });
const nack = (r: DiscoveryResponse | undefined, keptVersion: string, names: string[] = []) =>
  req({
    typeUrl: r?.typeUrl ?? "",
    versionInfo: keptVersion,
    responseNonce: r?.nonce ?? "",
    resourceNames: names,
    errorDetail: create(StatusSchema, { code: 3, message: "bad listener" }),
  });
const resourceNames = (r: DiscoveryResponse | undefined) =>
  r?.resources.map((a) => new TextDecoder().decode(a.value).split("@")[0]);

describe("SotW session: first requests", () => {
  it("answers a first wildcard LDS request with every listener, as Any, with a set version", async () => {
    const h = harness();
    await h.publish(LDS, "b:80", "vb");
    await h.publish(LDS, "a:80", "va");
    const [r, ...rest] = await h.session.onRequest(req({ typeUrl: LDS }));
    expect(rest).toEqual([]);
    expect(r?.typeUrl).toBe(LDS);
    expect(r?.nonce).toBe("n1");
    expect(r?.resources.map((a) => a.typeUrl)).toEqual([LDS, LDS]);
    expect(resourceNames(r)).toEqual(["a:80", "b:80"]);
    expect(r?.versionInfo).toBe(
      await setVersion([
        { name: "a:80", version: "va" },
        { name: "b:80", version: "vb" },
      ]),
    );
  });

  const emptyCases = [
    { name: "EDS names that do not exist yet", request: { typeUrl: EDS, resourceNames: ["outbound|80||h"] } },
    { name: "EDS with no names (not a wildcard)", request: { typeUrl: EDS } },
    { name: "RDS with no names (not a wildcard)", request: { typeUrl: RDS } },
    {
      name: "a type we do not serve",
      request: { typeUrl: "type.googleapis.com/envoy.service.runtime.v3.Runtime" },
    },
  ];
  for (const c of emptyCases) {
    it(`answers even with zero resources: ${c.name}`, async () => {
      const h = harness();
      await h.publish(EDS, "outbound|90||h");
      await h.publish(RDS, "h:90");
      const [r] = await h.session.onRequest(req(c.request));
      expect(r?.resources).toEqual([]);
      expect(r?.nonce).toBe("n1");
      expect(r?.versionInfo).toBe(await setVersion([]));
    });
  }

  it("answers a first request carrying a nonce from another stream (reconnect)", async () => {
    const h = harness();
    await h.publish(CDS, "c");
    const [r] = await h.session.onRequest(
      req({ typeUrl: CDS, responseNonce: "old-stream", versionInfo: "x" }),
    );
    expect(resourceNames(r)).toEqual(["c"]);
    expect(h.session.status().types[0]?.ackedVersion).toBe("x");
  });

  it("keeps the node of the first request, its id and GENERATOR only", async () => {
    const h = harness();
    const node = create(NodeSchema, {
      id: "sidecar~10.0.0.1~a.ns~ns.svc.cluster.local",
      metadata: { GENERATOR: "grpc", BULK: "x".repeat(100_000) },
      userAgentName: "envoy",
    });
    await h.session.onRequest(req({ typeUrl: LDS, node }));
    await h.session.onRequest(req({ typeUrl: CDS }));
    expect(h.session.node()?.id).toBe(node.id);
    expect(nodeGenerator(h.session.node())).toBe("grpc");
    expect(nodeGenerator(undefined)).toBe("");
    expect(h.session.node()?.metadata).toEqual({ GENERATOR: "grpc" });
    expect(h.session.node()?.userAgentName).toBe("");
    expect(h.session.status()).toMatchObject({ nodeId: node.id, generator: "grpc" });
  });

  it("ignores a request without a type URL", async () => {
    expect(await harness().session.onRequest(req({ typeUrl: "" }))).toEqual([]);
  });
});

describe("SotW session: ACK, NACK, stale nonces", () => {
  it("answers nothing to an ACK and records the acked version", async () => {
    const h = harness();
    await h.publish(CDS, "c");
    const [r] = await h.session.onRequest(req({ typeUrl: CDS }));
    expect(await h.session.onRequest(ack(r))).toEqual([]);
    expect(h.statuses.at(-1)?.types[0]).toMatchObject({
      typeUrl: CDS,
      wildcard: true,
      ackedVersion: r?.versionInfo,
    });
    expect(h.statuses.at(-1)?.types[0]?.nack).toBeUndefined();
  });

  it("records a NACK, keeps the acked version, and does not resend until resources change", async () => {
    const h = harness();
    await h.publish(LDS, "l", "v1");
    const [first] = await h.session.onRequest(req({ typeUrl: LDS }));
    await h.session.onRequest(ack(first));
    await h.publish(LDS, "l", "v2");
    const [bad] = await h.session.onPush();
    expect(await h.session.onRequest(nack(bad, first?.versionInfo ?? ""))).toEqual([]);
    expect(h.statuses.at(-1)?.types[0]).toMatchObject({
      ackedVersion: first?.versionInfo,
      nack: { versionInfo: first?.versionInfo, nonce: bad?.nonce, message: "bad listener" },
    });
    expect(await h.session.onPush()).toEqual([]);
    await h.publish(LDS, "l", "v3");
    const [fixed] = await h.session.onPush();
    expect(fixed?.nonce).toBe("n3");
    await h.session.onRequest(ack(fixed));
    expect(h.statuses.at(-1)?.types[0]?.nack).toBeUndefined();
    expect(h.statuses.at(-1)?.types[0]?.ackedVersion).toBe(fixed?.versionInfo);
  });

  it("ignores a stale nonce entirely, subscription changes included", async () => {
    const h = harness();
    await h.publish(EDS, "a");
    await h.publish(EDS, "b");
    const [r1] = await h.session.onRequest(req({ typeUrl: EDS, resourceNames: ["a"] }));
    await h.publish(EDS, "a", "v2");
    const [r2] = await h.session.onPush();
    expect(r2?.nonce).toBe("n2");
    expect(await h.session.onRequest(ack(r1, ["a", "b"]))).toEqual([]);
    expect(await h.session.onRequest(nack(r1, "", ["a", "b"]))).toEqual([]);
    const status = h.session.status().types[0];
    expect(status?.subscribed).toEqual(["a"]);
    expect(status).not.toHaveProperty("ackedVersion");
    expect(status).not.toHaveProperty("nack");
    expect(await h.session.onPush()).toEqual([]); // still only "a", already sent as n2
    expect(h.statuses).toEqual([]);
  });
});

describe("SotW session: subscriptions", () => {
  it("answers a changed subscription with the new set, even when nothing changed in the store", async () => {
    const h = harness();
    await h.publish(RDS, "a");
    await h.publish(RDS, "b");
    const [r1] = await h.session.onRequest(req({ typeUrl: RDS, resourceNames: ["a"] }));
    const [r2] = await h.session.onRequest(ack(r1, ["a", "b"]));
    expect(resourceNames(r2)).toEqual(["a", "b"]);
    const [r3] = await h.session.onRequest(ack(r2, ["b"]));
    expect(resourceNames(r3)).toEqual(["b"]);
    expect(await h.session.onRequest(ack(r3, ["b"]))).toEqual([]);
  });

  it("follows the wildcard rules for LDS: legacy empty, explicit names, empty = nothing, '*'", async () => {
    const h = harness();
    await h.publish(LDS, "a");
    await h.publish(LDS, "b");
    const [r1] = await h.session.onRequest(req({ typeUrl: LDS }));
    expect(resourceNames(r1)).toEqual(["a", "b"]);
    expect(await h.session.onRequest(ack(r1))).toEqual([]); // still the legacy wildcard
    const [r2] = await h.session.onRequest(ack(r1, ["a"]));
    expect(resourceNames(r2)).toEqual(["a"]);
    const [r3] = await h.session.onRequest(ack(r2, []));
    expect(resourceNames(r3)).toEqual([]); // explicit before: empty now means unsubscribed
    const [r4] = await h.session.onRequest(ack(r3, ["*", "a"]));
    expect(resourceNames(r4)).toEqual(["a", "b"]);
    expect(h.session.status().types[0]).toMatchObject({ wildcard: true, subscribed: ["a"] });
  });

  it("treats '*' as an ordinary name for EDS", async () => {
    const h = harness();
    await h.publish(EDS, "a");
    const [r] = await h.session.onRequest(req({ typeUrl: EDS, resourceNames: ["*"] }));
    expect(resourceNames(r)).toEqual([]);
  });
});

describe("SotW session: pushes", () => {
  it("sends a name asked for before it existed once it exists", async () => {
    const h = harness();
    const [r1] = await h.session.onRequest(req({ typeUrl: EDS, resourceNames: ["outbound|80||h"] }));
    await h.session.onRequest(ack(r1, ["outbound|80||h"]));
    expect(await h.session.onPush()).toEqual([]);
    await h.publish(EDS, "outbound|80||h");
    const [r2] = await h.session.onPush();
    expect(resourceNames(r2)).toEqual(["outbound|80||h"]);
  });

  it("sends nothing when nothing changed, and drops what was removed", async () => {
    const h = harness();
    await h.publish(CDS, "a");
    await h.publish(CDS, "b");
    const [r1] = await h.session.onRequest(req({ typeUrl: CDS }));
    await h.session.onRequest(ack(r1));
    await h.publish(CDS, "a"); // same version rewritten
    expect(await h.session.onPush()).toEqual([]);
    await h.remove(CDS, "b");
    const [r2] = await h.session.onPush();
    expect(resourceNames(r2)).toEqual(["a"]);
  });

  it("pushes in make-before-break order CDS, EDS, LDS, RDS, whatever order the proxy subscribed in", async () => {
    const h = harness();
    for (const t of [RDS, LDS, EDS, CDS]) {
      await h.publish(t, "x");
      const [r] = await h.session.onRequest(req({ typeUrl: t, resourceNames: ["x"] }));
      await h.session.onRequest(ack(r, ["x"]));
    }
    for (const t of [RDS, LDS, EDS, CDS]) await h.publish(t, "x", "v2");
    expect((await h.session.onPush()).map((r) => r.typeUrl)).toEqual([CDS, EDS, LDS, RDS]);
  });

  it("recomputes only the given types when asked", async () => {
    const h = harness();
    for (const t of [CDS, EDS]) {
      await h.publish(t, "x");
      await h.session.onRequest(req({ typeUrl: t, resourceNames: ["x"] }));
      await h.publish(t, "x", "v2");
    }
    expect((await h.session.onPush([EDS])).map((r) => r.typeUrl)).toEqual([EDS]);
    expect((await h.session.onPush()).map((r) => r.typeUrl)).toEqual([CDS]);
  });
});

describe("SotW session: one call at a time", () => {
  it("starts a call only after the previous one finished, and survives a failing source", async () => {
    const calls: string[] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let fail = true;
    const source: ResourceSource = {
      async get() {
        return [];
      },
      async list(typeUrl) {
        calls.push(typeUrl);
        if (typeUrl === CDS) await gate;
        if (typeUrl === LDS && fail) throw new Error("store down");
        return [];
      },
    };
    const { session } = harness(source);
    const first = session.onRequest(req({ typeUrl: CDS }));
    const second = session.onRequest(req({ typeUrl: LDS }));
    await new Promise((r) => setImmediate(r));
    expect(calls).toEqual([CDS]);
    release();
    expect((await first)[0]?.nonce).toBe("n1");
    await expect(second).rejects.toThrow("store down");
    fail = false;
    expect((await session.onRequest(req({ typeUrl: LDS })))[0]?.nonce).toBe("n2");
  });
});

describe("SotW session: what a push carries", () => {
  it("EDS and RDS pushes carry only what changed; CDS and LDS pushes carry every resource", async () => {
    const h = harness();
    for (const name of ["c1", "c2"]) {
      await h.publish(CDS, name);
      await h.publish(EDS, name);
    }
    const [cds] = await h.session.onRequest(req({ typeUrl: CDS }));
    await h.session.onRequest(ack(cds));
    const [eds] = await h.session.onRequest(req({ typeUrl: EDS, resourceNames: ["c1", "c2"] }));
    await h.session.onRequest(ack(eds, ["c1", "c2"]));

    await h.publish(EDS, "c2", "v2");
    await h.publish(CDS, "c2", "v2");
    const pushed = await h.session.onPush();
    expect(pushed.map((r) => [r.typeUrl, resourceNames(r)])).toEqual([
      [CDS, ["c1", "c2"]],
      [EDS, ["c2"]],
    ]);
    // version_info still names the whole set the client now holds.
    expect(pushed[1]?.versionInfo).toBe(
      await setVersion([
        { name: "c1", version: "v1" },
        { name: "c2", version: "v2" },
      ]),
    );
  });
});
