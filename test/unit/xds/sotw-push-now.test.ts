/**
 * A SotW push answered at once and a plain ACK recorded at once (onPush / onRequest return an
 * array, no promise): the same responses, versions and status as the same input answered through
 * the session's queue; when the push or request alone cannot answer, nothing changes before the
 * queued path answers it as ever.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeSha256 } from "../../../functions/node/sha256.ts";
import { NodeSchema } from "../../../lib/gen/envoy/config/core/v3/base_pb.ts";
import {
  DiscoveryRequestSchema,
  type DiscoveryResponse,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { ResourceChange } from "../../../lib/resources/changes.ts";
import type { SyncGate } from "../../../lib/resources/sync-gate.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { useSyncSha256 } from "../../../lib/resources/version.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { createSotwSession } from "../../../lib/xds/sotw.ts";
import { createStoreSource } from "../../../lib/xds/source.ts";
import { atOnce, throughQueue } from "./session-queue.ts";

const { cluster: CDS, endpoint: EDS, route: RDS } = TypeUrl;

const stored = (typeUrl: TypeUrl, name: string, version: string): StoredResource => ({
  typeUrl,
  name,
  version,
  body: new TextEncoder().encode(`${name}@${version}`),
  service: "ns/h",
});

/** A request from the proxy; its node is the test's unless `init` names one. */
const request = (init: MessageInitShape<typeof DiscoveryRequestSchema>) => {
  const r = create(DiscoveryRequestSchema, init);
  r.node ??= create(NodeSchema, { id: "sidecar~10.0.0.1~p.ns~ns.svc.cluster.local" });
  return r;
};

/** The request answering `r`: its ACK (or NACK with `error`), repeating `names`. */
const answerTo = (r: DiscoveryResponse, names: string[], error?: string) =>
  create(DiscoveryRequestSchema, {
    typeUrl: r.typeUrl,
    versionInfo: r.versionInfo,
    responseNonce: r.nonce,
    resourceNames: names,
    ...(error !== undefined && { errorDetail: { code: 3, message: error } }),
  });

/** What is compared: type, version, nonce and the resources carried (name@version). */
const shape = (rs: DiscoveryResponse[]) =>
  rs.map((r) => {
    const names = r.resources.map((a) => new TextDecoder().decode(a.value));
    return `${r.typeUrl.slice(r.typeUrl.lastIndexOf(".") + 1)} ${r.versionInfo} ${r.nonce} [${names.join(",")}]`;
  });

/** Two sessions in lockstep over two stores: `later` answers through its queue, `now` at once when it can. */
function pair(gate?: SyncGate) {
  const make = () => {
    const store = createMemoryStore();
    let n = 0;
    const session = createSotwSession({ source: createStoreSource(store), nonce: () => `n${++n}`, gate });
    return { store, session };
  };
  const later = make();
  const now = make();
  let changes: ResourceChange[] = [];
  const both = async (f: (s: ReturnType<typeof make>) => Promise<unknown>) => {
    await f(later);
    await f(now);
  };
  return {
    later,
    now,
    /** Publishes `name@version`; `bytes` false: the change names it without its bytes (the store must be read). */
    async publish(typeUrl: TypeUrl, name: string, version = "v1", bytes = true) {
      const r = stored(typeUrl, name, version);
      await both((s) => s.store.put(keys.resource(typeUrl, name), r));
      changes.push(bytes ? r : { typeUrl, name, version });
    },
    async remove(typeUrl: TypeUrl, name: string) {
      await both((s) => s.store.delete(keys.resource(typeUrl, name)));
      changes.push({ typeUrl, name, version: null });
    },
    /** Pushes both; `answeredNow` says whether `now` answered at once. */
    async push() {
      const pushed = changes;
      changes = [];
      const a = await throughQueue(later.session, () => later.session.onPush(undefined, pushed));
      const out = now.session.onPush(undefined, pushed);
      const direct = atOnce(out);
      const b = await out;
      return { later: a, now: b, answeredNow: direct !== undefined };
    },
    /** ACKs every response on both sessions (through the queue on `later`, at once when it can on `now`). */
    async ack(later: DiscoveryResponse[], now: DiscoveryResponse[], names: string[]) {
      for (const r of later)
        await throughQueue(this.later.session, () => this.later.session.onRequest(answerTo(r, names)));
      for (const r of now) await this.now.session.onRequest(answerTo(r, names));
    },
  };
}

describe("SotW push answered at once", () => {
  beforeAll(() => useSyncSha256(nodeSha256));
  afterAll(() => useSyncSha256(undefined));

  type Step = { publish?: [TypeUrl, string, string?, boolean?]; remove?: [TypeUrl, string] };
  const cases: { name: string; typeUrl: TypeUrl; names: string[]; steps: Step[][]; now: boolean[] }[] = [
    {
      name: "EDS: an update, a removal, a name appearing, an unrelated change, the same version again",
      typeUrl: EDS,
      names: ["a", "b", "missing"],
      steps: [
        [{ publish: [EDS, "a", "v2"] }],
        [{ remove: [EDS, "b"] }],
        [{ publish: [EDS, "missing"] }],
        [{ publish: [EDS, "other", "v2"] }],
        [{ publish: [EDS, "a", "v2"] }],
        [{ publish: [EDS, "a", "v3"] }, { remove: [EDS, "missing"] }],
      ],
      now: [true, true, true, true, true, true],
    },
    {
      name: "RDS: two names changed in one push",
      typeUrl: RDS,
      names: ["a", "b"],
      steps: [[{ publish: [RDS, "a", "v2"] }, { publish: [RDS, "b", "v2"] }]],
      now: [true],
    },
    {
      name: "a change without its bytes: answered by onPush (the store is read)",
      typeUrl: EDS,
      names: ["a"],
      steps: [[{ publish: [EDS, "a", "v2", false] }], [{ publish: [EDS, "a", "v3"] }]],
      now: [false, true],
    },
    {
      name: "CDS answers the whole set: onPush; untouched by a push, answered at once (nothing)",
      typeUrl: CDS,
      names: [],
      steps: [[{ publish: [CDS, "c2"] }], [{ publish: [EDS, "a", "v2"] }]],
      now: [false, true],
    },
  ];
  it.each(cases)("$name", async (c) => {
    const p = pair();
    for (const name of ["a", "b", "other"]) {
      await p.publish(EDS, name);
      await p.publish(RDS, name);
    }
    await p.publish(CDS, "c1");
    await p.push(); // the setup's own changes, before any subscription
    const first = {
      later: await p.later.session.onRequest(request({ typeUrl: c.typeUrl, resourceNames: c.names })),
      now: await p.now.session.onRequest(request({ typeUrl: c.typeUrl, resourceNames: c.names })),
    };
    expect(shape(first.now)).toEqual(shape(first.later));
    await p.ack(first.later, first.now, c.names);
    for (const [i, step] of c.steps.entries()) {
      for (const s of step) {
        if (s.publish) await p.publish(...s.publish);
        if (s.remove) await p.remove(...s.remove);
      }
      const { later, now, answeredNow } = await p.push();
      expect(shape(now)).toEqual(shape(later));
      expect(answeredNow).toBe(c.now[i]);
      expect(p.now.session.status()).toEqual(p.later.session.status());
      await p.ack(later, now, c.names);
      expect(p.now.session.status()).toEqual(p.later.session.status());
    }
  });

  it("declines, changing nothing, while a call is pending, while a first answer is held, without synchronous hashing", async () => {
    let open = false;
    const p = pair({ synced: () => open });
    await p.publish(EDS, "a");
    const { session } = p.now;
    // A first request holding a version while not synced: held until a push after the gate opens.
    expect(
      await session.onRequest(request({ typeUrl: EDS, resourceNames: ["a"], versionInfo: "x" })),
    ).toEqual([]);
    // Held: the push reads the store (a promise), and finds the gate still closed.
    const held = session.onPush(undefined, [stored(EDS, "a", "v2")]);
    expect(atOnce(held)).toBeUndefined();
    expect(await held).toEqual([]);
    open = true;
    const answered = await session.onPush(undefined, [stored(EDS, "a", "v2")]);
    expect(answered).toHaveLength(1);
    await session.onRequest(answerTo(answered[0] as DiscoveryResponse, ["a"]));
    const before = session.status();
    // A call pending (a push re-reading CDS, which this stream does not ask for): the next waits its turn.
    const pending = session.onPush([CDS]);
    const queued = session.onPush(undefined, [stored(EDS, "a", "v3")]);
    expect(atOnce(queued)).toBeUndefined();
    expect(session.status()).toEqual(before);
    expect(await pending).toEqual([]);
    expect(
      shape(await queued).map((s) => s.slice(s.indexOf("["))),
      "answered in its turn",
    ).toEqual(["[a@v3]"]);
    useSyncSha256(undefined);
    try {
      const unhashed = session.onPush(undefined, [stored(EDS, "a", "v4")]);
      expect(atOnce(unhashed)).toBeUndefined();
      expect(await unhashed).toHaveLength(1);
    } finally {
      useSyncSha256(nodeSha256);
    }
    // Idle again, hashing synchronously: answered at once.
    const direct = atOnce(session.onPush(undefined, [stored(EDS, "a", "v5")]));
    expect(direct?.map((r) => r.resources.map((a) => new TextDecoder().decode(a.value)))).toEqual([["a@v5"]]);
  });
  it("declines while names asked for before sync are held as missing: the push publishing them answers at once", async () => {
    // The agent's start: a grpc-js-xds client asks for its Listener and Cluster by name while the
    // agent's cache is empty, and no gate-opening push follows; the push that caches the name must
    // answer it, as onPush does.
    const p = pair({ synced: () => false });
    for (const s of [p.later, p.now])
      expect(await s.session.onRequest(request({ typeUrl: CDS, resourceNames: ["a"] }))).toEqual([]);
    await p.publish(CDS, "a");
    const pushed = await p.push();
    expect(pushed.answeredNow).toBe(false);
    expect(shape(pushed.now)).toEqual(shape(pushed.later));
    expect(pushed.now.map((r) => r.resources.length)).toEqual([1]);
  });
});

describe("SotW request answered at once", () => {
  it("records an ACK, a NACK and a stale nonce at once, as through the queue; not a subscription change or a first request", async () => {
    const p = pair();
    for (const name of ["a", "b"]) await p.publish(EDS, name);
    const sub = {
      later: await p.later.session.onRequest(request({ typeUrl: EDS, resourceNames: ["a"] })),
      now: await p.now.session.onRequest(request({ typeUrl: EDS, resourceNames: ["a"] })),
    };
    const steps: {
      name: string;
      make: (r: DiscoveryResponse) => ReturnType<typeof request>;
      now: boolean;
    }[] = [
      { name: "ack", make: (r) => answerTo(r, ["a"]), now: true },
      { name: "stale nonce", make: (r) => ({ ...answerTo(r, ["a", "b"]), responseNonce: "old" }), now: true },
      { name: "nack", make: (r) => answerTo(r, ["a"], "bad endpoint"), now: true },
      { name: "subscribe", make: (r) => answerTo(r, ["a", "b"]), now: false },
      { name: "the same names again, another order", make: (r) => answerTo(r, ["b", "a"]), now: true },
      { name: "a name repeated in place of another", make: (r) => answerTo(r, ["a", "a"]), now: false },
      { name: "no nonce", make: () => request({ typeUrl: EDS, resourceNames: ["a"] }), now: false },
    ];
    let later = sub.later.at(-1) as DiscoveryResponse;
    let now = sub.now.at(-1) as DiscoveryResponse;
    for (const step of steps) {
      await p.publish(EDS, "a", `v-${step.name}`);
      const pushed = await p.push();
      later = pushed.later.at(-1) ?? later;
      now = pushed.now.at(-1) ?? now;
      const a = await throughQueue(p.later.session, () => p.later.session.onRequest(step.make(later)));
      const out = p.now.session.onRequest(step.make(now));
      expect(atOnce(out) !== undefined, step.name).toBe(step.now);
      const b = await out;
      expect(shape(b), step.name).toEqual(shape(a));
      expect(p.now.session.status(), step.name).toEqual(p.later.session.status());
      later = a.at(-1) ?? later;
      now = b.at(-1) ?? now;
    }
  });
});
