/**
 * One answer per push for Delta streams in the same state (lib/xds/delta-shared.ts): streams with
 * one subscription holding the same versions of what a push changed get responses carrying one
 * shared resources array (encoded once), each with its own nonce and set version, and every
 * response is exactly what a stream answering alone (through its queue) sends; a stream with anything
 * pending (a NACK, a response in flight) answers alone; a subscription change moves a stream to
 * the class of its new subscription.
 */
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeSha256 } from "../../../functions/node/sha256.ts";
import {
  type DeltaDiscoveryResponse,
  DeltaDiscoveryResponseSchema,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { ResourceChange } from "../../../lib/resources/changes.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { useSyncSha256 } from "../../../lib/resources/version.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { createDeltaSession, type DeltaSession } from "../../../lib/xds/delta.ts";
import { encodeDeltaResponse } from "../../../lib/xds/response-bytes.ts";
import { createStoreSource } from "../../../lib/xds/source.ts";
import { ack, nack, req } from "./delta-harness.ts";
import { atOnce, throughQueue } from "./session-queue.ts";

const { cluster: CDS, endpoint: EDS } = TypeUrl;

const stored = (typeUrl: TypeUrl, name: string, version: string): StoredResource => ({
  typeUrl,
  name,
  version,
  body: new TextEncoder().encode(`${name}@${version}`),
  service: "ns/h",
});

/** A stream of a case: what it subscribes to, and what it does with the first push's answer. */
interface StreamSpec {
  eds?: string[];
  /** Also CDS by wildcard. */
  cds?: boolean;
  /** initial_resource_versions of its EDS request. */
  initial?: Record<string, string>;
  /** The first push: NACK its answer, leave it unanswered, miss it (not pushed), or ACK it subscribing to more EDS names. */
  after?: "nack" | "in-flight" | "missed" | { subscribe: string[] };
}

/** A stream under test (answering at once: may share) and its twin answering alone (through its queue), with the same nonces. */
function streamPair(store: ReturnType<typeof createMemoryStore>, i: number) {
  const make = () => {
    let n = 0;
    return createDeltaSession({ source: createStoreSource(store), nonce: () => `s${i}-${++n}` });
  };
  return { now: make(), alone: make() };
}

async function both(
  p: { now: DeltaSession; alone: DeltaSession },
  f: (s: DeltaSession) => DeltaDiscoveryResponse[] | Promise<DeltaDiscoveryResponse[]>,
) {
  const now = await f(p.now);
  const alone = await f(p.alone);
  expect(now).toEqual(alone);
  return now;
}

/** The encoded response; the same bytes as its per-field encoding (an unshared copy), parsing to what toBinary's parse to. */
function encodedAlike(r: DeltaDiscoveryResponse): void {
  const bytes = encodeDeltaResponse(r);
  expect(bytes).toEqual(encodeDeltaResponse({ ...r, resources: [...r.resources] }));
  expect(fromBinary(DeltaDiscoveryResponseSchema, bytes)).toEqual(
    fromBinary(DeltaDiscoveryResponseSchema, toBinary(DeltaDiscoveryResponseSchema, r)),
  );
}

describe("Delta streams in one state share one answer per push", () => {
  beforeAll(() => useSyncSha256(nodeSha256));
  afterAll(() => useSyncSha256(undefined));

  const cases: { name: string; streams: StreamSpec[]; groups: number[][]; alone?: number[] }[] = [
    {
      name: "one subscription, same versions: one class, each its own nonce",
      streams: [{ eds: ["a", "b"] }, { eds: ["b", "a"] }, { eds: ["a", "b"] }],
      groups: [[0, 1, 2]],
    },
    {
      name: "another subscription reaching the same change: another class",
      streams: [{ eds: ["a", "b"] }, { eds: ["a", "c"] }, { eds: ["a", "b"] }],
      groups: [[0, 2], [1]],
    },
    {
      name: "another held version of the changed name: another class",
      streams: [{ eds: ["a"] }, { eds: ["a"], after: "missed" }, { eds: ["a"] }],
      groups: [[0, 2], [1]],
    },
    {
      name: "a stream that reconnected saying what it holds joins the class",
      streams: [{ eds: ["a"] }, { eds: ["a"], initial: { a: "v1" } }],
      groups: [[0, 1]],
    },
    {
      name: "a stream that NACKed answers alone, the others still share",
      streams: [{ eds: ["a", "b"] }, { eds: ["a", "b"], after: "nack" }, { eds: ["a", "b"] }],
      groups: [[0, 2]],
      alone: [1],
    },
    {
      name: "a stream with a response in flight answers alone",
      streams: [{ eds: ["a"] }, { eds: ["a"], after: "in-flight" }, { eds: ["a"] }],
      groups: [[0, 2]],
      alone: [1],
    },
    {
      name: "a stream that subscribed again to a name it holds shares again once it was resent",
      streams: [{ eds: ["a", "b"] }, { eds: ["a", "b"], after: { subscribe: ["b"] } }, { eds: ["a", "b"] }],
      groups: [[0, 1, 2]],
    },
    {
      name: "streams told a subscribed name does not exist answer alone",
      streams: [{ eds: ["a", "zz"] }, { eds: ["a", "zz"] }],
      groups: [],
      alone: [0, 1],
    },
    {
      name: "a subscription change moves a stream to its new subscription's class",
      streams: [
        { eds: ["a", "b"] },
        { eds: ["a", "b", "c"] },
        { eds: ["a", "b"], after: { subscribe: ["c"] } },
      ],
      groups: [[0], [1, 2]],
    },
    {
      name: "CDS by wildcard and EDS by name: each type shares its own answer",
      streams: [
        { eds: ["a"], cds: true },
        { eds: ["a"], cds: true },
      ],
      groups: [[0, 1]],
    },
  ];

  it.each(cases)("$name", async (c) => {
    const store = createMemoryStore();
    const publish = async (changes: ResourceChange[], r: StoredResource) => {
      await store.put(keys.resource(r.typeUrl, r.name), r);
      changes.push(r);
    };
    for (const name of ["a", "b", "c"]) await publish([], stored(EDS, name, "v1"));
    await publish([], stored(CDS, "c1", "v1"));
    const pairs = c.streams.map((_, i) => streamPair(store, i));
    for (const [i, s] of c.streams.entries()) {
      const p = pairs[i] as (typeof pairs)[number];
      const eds = await both(p, (x) =>
        x.onRequest(
          req({ typeUrl: EDS, resourceNamesSubscribe: s.eds, initialResourceVersions: s.initial ?? {} }),
        ),
      );
      for (const r of eds) await both(p, (x) => x.onRequest(ack(r)));
      if (s.cds) {
        const cds = await both(p, (x) => x.onRequest(req({ typeUrl: CDS })));
        for (const r of cds) await both(p, (x) => x.onRequest(ack(r)));
      }
    }
    // The first push, answered by each stream's own rule for it (NACK, no answer, ACK with a subscription).
    const first: ResourceChange[] = [];
    await publish(first, stored(EDS, "a", "v2"));
    for (const [i, s] of c.streams.entries()) {
      const p = pairs[i] as (typeof pairs)[number];
      if (s.after === "missed") continue;
      const now = atOnce(p.now.onPush(undefined, first));
      expect(now).toEqual(await throughQueue(p.alone, () => p.alone.onPush(undefined, first)));
      for (const r of now ?? []) {
        if (s.after === "in-flight") continue;
        const answer =
          s.after === "nack"
            ? nack(r)
            : ack(r, typeof s.after === "object" ? { resourceNamesSubscribe: s.after.subscribe } : {});
        for (const x of await both(p, (x) => x.onRequest(answer))) await both(p, (y) => y.onRequest(ack(x)));
      }
    }
    // The push under test: one changes array, as one view's streams take it.
    const second: ResourceChange[] = [];
    await publish(second, stored(EDS, "a", "v3"));
    if (c.streams.some((s) => s.cds)) await publish(second, stored(CDS, "c1", "v2"));
    const answers: DeltaDiscoveryResponse[][] = [];
    for (const p of pairs) {
      const now = atOnce(p.now.onPush(undefined, second));
      expect(now).toBeDefined();
      expect(now).toEqual(await throughQueue(p.alone, () => p.alone.onPush(undefined, second)));
      expect(p.now.status()).toEqual(p.alone.status());
      for (const r of now ?? []) encodedAlike(r);
      answers.push(now ?? []);
    }
    const nonces = answers.flat().map((r) => r.nonce);
    expect(new Set(nonces).size).toBe(nonces.length);
    const sharedArrays = (i: number) => (answers[i] as DeltaDiscoveryResponse[]).map((r) => r.resources);
    for (const group of c.groups) {
      for (const i of group) {
        expect(sharedArrays(i).length).toBeGreaterThan(0);
        for (const a of sharedArrays(i)) expect(Object.isFrozen(a)).toBe(true);
        sharedArrays(i).forEach((a, t) => {
          expect(a).toBe(sharedArrays(group[0] as number)[t]);
        });
      }
      for (const other of c.groups)
        if (other !== group)
          expect(sharedArrays(other[0] as number)[0]).not.toBe(sharedArrays(group[0] as number)[0]);
    }
    for (const i of c.alone ?? []) for (const a of sharedArrays(i)) expect(Object.isFrozen(a)).toBe(false);
  });

  it("a subscription no other stream has answers alone: no class is kept for it", async () => {
    const store = createMemoryStore();
    for (const name of ["solo-a", "solo-b"])
      await store.put(keys.resource(EDS, name), stored(EDS, name, "v1"));
    const subscriptions = [["solo-a"], ["solo-a"], ["solo-a", "solo-b"]];
    const sessions = subscriptions.map(() => createDeltaSession({ source: createStoreSource(store) }));
    for (const [i, s] of sessions.entries())
      for (const r of await s.onRequest(req({ typeUrl: EDS, resourceNamesSubscribe: subscriptions[i] })))
        await s.onRequest(ack(r));
    const changes = [stored(EDS, "solo-a", "v2")];
    const [x, y, own] = sessions.map((s) => (atOnce(s.onPush(undefined, changes)) ?? [])[0]?.resources);
    expect(x).toBe(y);
    expect(Object.isFrozen(x)).toBe(true);
    expect(own).toEqual(x);
    expect(Object.isFrozen(own)).toBe(false);
  });

  it("streams with another response budget are another class; an answer over the budget is not shared", async () => {
    const store = createMemoryStore();
    await store.put(keys.resource(EDS, "a"), stored(EDS, "a", "v1"));
    const budgets = [4096, 4096, 8192, 64];
    const sessions = budgets.map((maxResponseBytes) =>
      createDeltaSession({ source: createStoreSource(store), maxResponseBytes }),
    );
    for (const s of sessions)
      for (const r of await s.onRequest(req({ typeUrl: EDS, resourceNamesSubscribe: ["a"] })))
        await s.onRequest(ack(r));
    const changes = [stored(EDS, "a", "v2")];
    const [x, y, z, tiny] = sessions.map((s) => (atOnce(s.onPush(undefined, changes)) ?? [])[0]?.resources);
    expect(x).toBe(y);
    expect(z).toEqual(x);
    expect(z).not.toBe(x);
    // Over its budget alone: sent alone in its own response, by the stream itself.
    expect(tiny).toEqual(x);
    expect(Object.isFrozen(tiny)).toBe(false);
  });

  it("streams pushed with another changes array (another view, another push) do not share", async () => {
    const store = createMemoryStore();
    await store.put(keys.resource(EDS, "a"), stored(EDS, "a", "v1"));
    const sessions = [0, 1].map((i) => streamPair(store, i).now);
    for (const s of sessions)
      for (const r of await s.onRequest(req({ typeUrl: EDS, resourceNamesSubscribe: ["a"] })))
        await s.onRequest(ack(r));
    const change = stored(EDS, "a", "v2");
    const [x, y] = sessions.map((s) => atOnce(s.onPush(undefined, [change])) ?? []);
    expect(x?.[0]?.resources).toEqual(y?.[0]?.resources);
    expect(x?.[0]?.resources).not.toBe(y?.[0]?.resources);
    // The shared body is kept with its type URL: the same array under another one encodes anew.
    const r = x?.[0] as DeltaDiscoveryResponse;
    expect(Object.isFrozen(r.resources)).toBe(true);
    encodedAlike(r);
    encodedAlike({ ...r, typeUrl: CDS });
  });
});
