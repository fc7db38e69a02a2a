/**
 * Start-up sync on every read path: until the gate opens, no proxy is told to remove what it
 * holds (Delta removed_resources, a SotW CDS/LDS answer lacking a held cluster, Poll/Watch, a
 * Fetch/REST answer to a client holding another version); proxies holding nothing are served at
 * once; and when the gate opens, the next push or wake sends what was held.
 */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { DiscoveryRequestSchema } from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { SyncGate } from "../../../lib/resources/sync-gate.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { fetchDiscovery } from "../../../lib/xds/fetch.ts";
import { createPollHub } from "../../../lib/xds/poll-hub.ts";
import { createPollServer } from "../../../lib/xds/poll-serve.ts";
import { answerRest } from "../../../lib/xds/rest.ts";
import { createSotwSession } from "../../../lib/xds/sotw.ts";
import { createStoreSource } from "../../../lib/xds/source.ts";
import { harness, req, summary } from "../xds/delta-harness.ts";
import { mutableSource, pollRequest, summary as pollSummary, res, until } from "../xds/poll-support.ts";

const { cluster: CDS, endpoint: EDS, listener: LDS } = TypeUrl;

/** A gate the test opens by hand. */
function gate(): SyncGate & { open(): void } {
  let synced = false;
  return {
    synced: () => synced,
    open() {
      synced = true;
    },
  };
}

describe("Delta ADS", () => {
  it("a reconnecting client keeps what it holds until sync, gets what exists at once, then the removals", async () => {
    const g = gate();
    const h = harness(g);
    await h.publish(CDS, "a", "v2");
    const first = await h.session.onRequest(
      req({ typeUrl: CDS, initialResourceVersions: { a: "v1", gone: "v1" } }),
    );
    expect(summary(first)).toEqual(["cds +a@v2"]);
    expect(summary(await h.session.onPush())).toEqual([]);
    g.open();
    expect(summary(await h.session.onPush())).toEqual(["cds -gone"]);
  });

  it("a name the client never held is not reported absent until sync (missing-names.test.ts)", async () => {
    const g = gate();
    const h = harness(g);
    const r = await h.session.onRequest(req({ typeUrl: EDS, resourceNamesSubscribe: ["never"] }));
    expect(summary(r)).toEqual([]);
    g.open();
    expect(summary(await h.session.onPush())).toEqual(["eds -never"]);
  });

  it("a resource deleted after the client got it is not removed until sync", async () => {
    const g = gate();
    const h = harness(g);
    await h.publish(CDS, "a");
    await h.publish(CDS, "b");
    const [r] = await h.session.onRequest(req({ typeUrl: CDS }));
    expect(summary([r])).toEqual(["cds +a@v1 +b@v1"]);
    await h.session.onRequest(req({ typeUrl: CDS, responseNonce: r?.nonce ?? "" }));
    await h.remove(CDS, "b");
    expect(summary(await h.session.onPush())).toEqual([]);
    g.open();
    expect(summary(await h.session.onPush())).toEqual(["cds -b"]);
  });

  it("a client holding nothing is served what exists at once", async () => {
    const h = harness(gate());
    await h.publish(CDS, "a");
    expect(summary(await h.session.onRequest(req({ typeUrl: CDS })))).toEqual(["cds +a@v1"]);
  });
});

describe("SotW ADS", () => {
  const sotw = (g: SyncGate) => {
    const h = harness(); // its store and publish helpers; the SotW session reads the same store
    let n = 0;
    const session = createSotwSession({
      source: createStoreSource(h.store),
      nonce: () => `s${++n}`,
      gate: g,
    });
    return { ...h, session };
  };
  const names = (r: { resources: { value: Uint8Array }[] } | undefined) =>
    (r?.resources ?? []).map((a) => new TextDecoder().decode(a.value));

  it("holds a first answer to a client with another version_info until sync", async () => {
    const g = gate();
    const h = sotw(g);
    await h.publish(CDS, "a");
    const held = await h.session.onRequest(
      create(DiscoveryRequestSchema, { typeUrl: CDS, versionInfo: "old" }),
    );
    expect(held).toEqual([]);
    expect(await h.session.onPush()).toEqual([]);
    g.open();
    const [r] = await h.session.onPush();
    expect(names(r)).toEqual(["a@v1"]);
  });

  it("answers a first request at once when the client holds nothing, or holds exactly the answer", async () => {
    const h = sotw(gate());
    await h.publish(CDS, "a");
    const [fresh] = await h.session.onRequest(create(DiscoveryRequestSchema, { typeUrl: CDS }));
    expect(names(fresh)).toEqual(["a@v1"]);
    const again = sotw(gate());
    await again.publish(CDS, "a");
    const [same] = await again.session.onRequest(
      create(DiscoveryRequestSchema, { typeUrl: CDS, versionInfo: fresh?.versionInfo ?? "" }),
    );
    expect(same?.versionInfo).toBe(fresh?.versionInfo);
  });

  it("holds a CDS or LDS push that lacks a cluster the client was sent, sends additions", async () => {
    for (const typeUrl of [CDS, LDS]) {
      const g = gate();
      const h = sotw(g);
      await h.publish(typeUrl, "a");
      await h.publish(typeUrl, "b");
      const [r] = await h.session.onRequest(create(DiscoveryRequestSchema, { typeUrl }));
      await h.session.onRequest(
        create(DiscoveryRequestSchema, { typeUrl, versionInfo: r?.versionInfo, responseNonce: r?.nonce }),
      );
      await h.publish(typeUrl, "c");
      const [grown] = await h.session.onPush();
      expect(names(grown)).toEqual(["a@v1", "b@v1", "c@v1"]);
      await h.remove(typeUrl, "b");
      expect(await h.session.onPush()).toEqual([]);
      g.open();
      const [shrunk] = await h.session.onPush();
      expect(names(shrunk)).toEqual(["a@v1", "c@v1"]);
    }
  });
});

describe("SotW ADS subscription changes", () => {
  it("holds the answer to a changed subscription that would drop a held cluster", async () => {
    const g = gate();
    const h = harness();
    let n = 0;
    const session = createSotwSession({
      source: createStoreSource(h.store),
      nonce: () => `s${++n}`,
      gate: g,
    });
    await h.publish(CDS, "a");
    await h.publish(CDS, "b");
    const [r] = await session.onRequest(create(DiscoveryRequestSchema, { typeUrl: CDS }));
    await h.remove(CDS, "b");
    const changed = create(DiscoveryRequestSchema, {
      typeUrl: CDS,
      versionInfo: r?.versionInfo,
      responseNonce: r?.nonce,
      resourceNames: ["a", "b"],
    });
    expect(await session.onRequest(changed)).toEqual([]);
    g.open();
    const [after] = await session.onPush();
    expect((after?.resources ?? []).map((x) => new TextDecoder().decode(x.value))).toEqual(["a@v1"]);
  });
});

describe("Poll and Watch", () => {
  it("Watch keeps a held name until the gate opens and the hub wakes it, then removes it", async () => {
    const g = gate();
    const m = mutableSource([res(CDS, "a", "v1")]);
    const hub = createPollHub(m.source);
    const server = createPollServer({
      source: m.source,
      hub,
      limits: { maxNamesPerRequest: 50, maxStreams: 5 },
      gate: g,
    });
    const stop = new AbortController();
    const watch = server.watch(pollRequest(CDS, { initialResourceVersions: { a: "v1", gone: "v1" } }), {
      signal: stop.signal,
    });
    const first = await watch.next();
    expect(pollSummary(first.value as never)).toEqual({ resources: {}, removed: [] });
    const next = watch.next();
    await until(() => hub.waiting === 1);
    hub.publish({}); // a push while not synced: nothing to say yet
    await until(() => hub.waiting === 1);
    g.open();
    hub.publish({}); // what the runtime does when the registry becomes synced
    expect(pollSummary((await next).value as never)).toEqual({ resources: {}, removed: ["gone"] });
    stop.abort();
    await watch.return(undefined);
  });

  it("Poll answers additions while not synced but no removal of a held name", async () => {
    const m = mutableSource([res(CDS, "a", "v2")]);
    const server = createPollServer({
      source: m.source,
      hub: createPollHub(m.source),
      limits: { maxNamesPerRequest: 50, maxStreams: 5 },
      gate: gate(),
    });
    const r = await server.poll(pollRequest(CDS, { initialResourceVersions: { a: "v1", gone: "v1" } }), {
      signal: new AbortController().signal,
    });
    expect(pollSummary(r)).toEqual({ resources: { a: "v2" }, removed: [] });
  });
});

describe("Fetch and REST", () => {
  // An empty body is a valid (empty) Cluster, so REST can render it as JSON.
  const source = mutableSource([{ ...res(CDS, "a", "v1"), body: new Uint8Array() }]).source;
  const fetchReq = (versionInfo: string) => create(DiscoveryRequestSchema, { typeUrl: CDS, versionInfo });

  it("a client without version_info is served at once; one holding another version is told to keep it", async () => {
    const fresh = await fetchDiscovery(source, CDS, fetchReq(""), false);
    expect(fresh.kind).toBe("ok");
    const current = fresh.kind === "ok" ? fresh.response.versionInfo : "";
    const same = await fetchDiscovery(source, CDS, fetchReq(current), false);
    expect(same).toMatchObject({ kind: "ok", notModified: true });
    const stale = await fetchDiscovery(source, CDS, fetchReq("old"), false);
    expect(stale.kind).toBe("unsynced");
    expect((await fetchDiscovery(source, CDS, fetchReq("old"), true)).kind).toBe("ok");
  });

  it("REST answers 503 to a stale version while not synced, 200 once synced", async () => {
    const body = JSON.stringify({ version_info: "old" });
    const held = await answerRest(source, CDS, body, { maxNames: 50, synced: false });
    expect(held.status).toBe(503);
    expect(held.status === 503 && held.error).toMatch(/not synced.*keep what you hold/);
    expect((await answerRest(source, CDS, body, { maxNames: 50, synced: true })).status).toBe(200);
    expect((await answerRest(source, CDS, "{}", { maxNames: 50, synced: false })).status).toBe(200);
  });
});
