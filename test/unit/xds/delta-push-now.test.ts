/**
 * A Delta push answered at once (onPush returns an array, no promise): the same responses,
 * versions and status as the same push answered through the session's queue; when the push alone
 * cannot answer, nothing changes before the queued path answers it as ever.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeSha256 } from "../../../functions/node/sha256.ts";
import type { DeltaDiscoveryResponse } from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { ResourceChange } from "../../../lib/resources/changes.ts";
import type { SyncGate } from "../../../lib/resources/sync-gate.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { useSyncSha256 } from "../../../lib/resources/version.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { createDeltaSession } from "../../../lib/xds/delta.ts";
import { createStoreSource } from "../../../lib/xds/source.ts";
import { ack, nack, req, summary } from "./delta-harness.ts";
import { atOnce, throughQueue } from "./session-queue.ts";

const { cluster: CDS, endpoint: EDS } = TypeUrl;

const stored = (typeUrl: TypeUrl, name: string, version: string): StoredResource => ({
  typeUrl,
  name,
  version,
  body: new TextEncoder().encode(`${name}@${version}`),
  service: "ns/h",
});

/** Two sessions in lockstep over two stores: `later` answers through its queue, `now` at once when it can. */
function pair(gate?: SyncGate) {
  const make = () => {
    const store = createMemoryStore();
    let n = 0;
    const session = createDeltaSession({ source: createStoreSource(store), nonce: () => `n${++n}`, gate });
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
    /** Sends `r` built from each session's own last responses to both; returns both answers. */
    async request(
      make: (last: DeltaDiscoveryResponse | undefined, which: "later" | "now") => ReturnType<typeof req>,
    ) {
      return {
        later: await throughQueue(later.session, () => later.session.onRequest(make(lastOf.later, "later"))),
        now: await now.session.onRequest(make(lastOf.now, "now")),
      };
    },
    /** Pushes both; `answeredNow` says whether `now` answered at once. */
    async push() {
      const pushed = changes;
      changes = [];
      const a = await throughQueue(later.session, () => later.session.onPush(undefined, pushed));
      const out = now.session.onPush(undefined, pushed);
      const direct = atOnce(out);
      const b = await out;
      lastOf.later = a.at(-1) ?? lastOf.later;
      lastOf.now = b.at(-1) ?? lastOf.now;
      return { later: a, now: b, answeredNow: direct !== undefined };
    },
  };
}
const lastOf: { later?: DeltaDiscoveryResponse; now?: DeltaDiscoveryResponse } = {};

/** The responses as compared: resources, removals, nonces and set versions. */
const shape = (rs: DeltaDiscoveryResponse[]) => [
  ...summary(rs),
  ...rs.map((r) => `${r.nonce} ${r.systemVersionInfo}`),
];

describe("Delta push answered at once", () => {
  beforeAll(() => useSyncSha256(nodeSha256));
  afterAll(() => useSyncSha256(undefined));

  type Step = { publish?: [TypeUrl, string, string?, boolean?]; remove?: [TypeUrl, string] };
  const cases: { name: string; wildcard?: boolean; gate?: boolean; steps: Step[][]; now: boolean[] }[] = [
    {
      name: "named: an update, a removal, a name appearing, an unrelated change, the same version again",
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
      name: "wildcard: names added and removed, make before break",
      wildcard: true,
      steps: [[{ publish: [CDS, "c2"] }, { remove: [CDS, "c1"] }], [{ publish: [CDS, "c3"] }]],
      now: [true, true],
    },
    {
      name: "a change without its bytes: answered by onPush (the store is read)",
      steps: [[{ publish: [EDS, "a", "v2", false] }], [{ publish: [EDS, "a", "v3"] }]],
      now: [false, true],
    },
    {
      name: "removals held while the gate is closed",
      gate: false,
      steps: [[{ remove: [EDS, "b"] }, { publish: [EDS, "a", "v2"] }]],
      now: [true],
    },
  ];
  it.each(cases)("$name", async (c) => {
    const p = pair(c.gate === undefined ? undefined : { synced: () => c.gate as boolean });
    lastOf.later = lastOf.now = undefined;
    for (const name of ["a", "b", "other"]) await p.publish(EDS, name);
    await p.publish(CDS, "c1");
    const first = await p.request(() =>
      c.wildcard
        ? req({ typeUrl: CDS })
        : req({ typeUrl: EDS, resourceNamesSubscribe: ["a", "b", "missing"] }),
    );
    expect(shape(first.now)).toEqual(shape(first.later));
    for (const r of first.later) await p.later.session.onRequest(ack(r));
    for (const r of first.now) await p.now.session.onRequest(ack(r));
    await p.push(); // the setup's own changes
    for (const [i, step] of c.steps.entries()) {
      for (const s of step) {
        if (s.publish) await p.publish(...s.publish);
        if (s.remove) await p.remove(...s.remove);
      }
      const { later, now, answeredNow } = await p.push();
      expect(shape(now)).toEqual(shape(later));
      expect(answeredNow).toBe(c.now[i]);
      expect(p.now.session.status()).toEqual(p.later.session.status());
      for (const r of later) await p.later.session.onRequest(ack(r));
      for (const r of now) await p.now.session.onRequest(ack(r));
    }
  });

  it("declines, changing nothing, while a call is pending; a NACKed version is not resent", async () => {
    const p = pair();
    for (const name of ["a", "b"]) await p.publish(EDS, name);
    const sub = await p.request(() => req({ typeUrl: EDS, resourceNamesSubscribe: ["a"] }));
    await p.now.session.onRequest(ack(sub.now[0]));
    const before = p.now.session.status();
    // A call pending: the serial queue is busy, so the push waits its turn (a promise).
    const pending = p.now.session.onRequest(ack(sub.now[0], { resourceNamesSubscribe: ["b"] }));
    const queued = p.now.session.onPush(undefined, [stored(EDS, "a", "v2")]);
    expect(atOnce(queued)).toBeUndefined();
    expect(p.now.session.status()).toEqual(before);
    expect(summary(await pending)).toEqual(["eds +b@v1"]);
    expect(summary(await queued)).toEqual(["eds +a@v2"]);
    // Idle again: answered at once; a NACK of it, and the same version pushed again sends nothing.
    const pushed = atOnce(p.now.session.onPush(undefined, [stored(EDS, "a", "v3")])) ?? [];
    expect(summary(pushed)).toEqual(["eds +a@v3"]);
    await p.now.session.onRequest(nack(pushed[0]));
    expect(atOnce(p.now.session.onPush(undefined, [stored(EDS, "a", "v3")]))).toEqual([]);
    expect(summary(atOnce(p.now.session.onPush(undefined, [stored(EDS, "a", "v4")])) ?? [])).toEqual([
      "eds +a@v4",
    ]);
  });

  it("declines without synchronous hashing (WebCrypto): onPush answers", async () => {
    useSyncSha256(undefined);
    try {
      const p = pair();
      await p.publish(EDS, "a");
      const sub = await p.request(() => req({ typeUrl: EDS, resourceNamesSubscribe: ["a"] }));
      await p.now.session.onRequest(ack(sub.now[0]));
      await p.later.session.onRequest(ack(sub.later[0]));
      await p.publish(EDS, "a", "v2");
      const { later, now, answeredNow } = await p.push();
      expect(answeredNow).toBe(false);
      expect(shape(now)).toEqual(shape(later));
    } finally {
      useSyncSha256(nodeSha256);
    }
  });

  it("a plain ACK or NACK is answered at once, as through the queue; anything with a subscription change is not", async () => {
    const p = pair();
    for (const name of ["a", "b"]) await p.publish(EDS, name);
    const sub = await p.request(() => req({ typeUrl: EDS, resourceNamesSubscribe: ["a"] }));
    const steps: {
      name: string;
      make: (r: DeltaDiscoveryResponse | undefined) => ReturnType<typeof req>;
      now: boolean;
    }[] = [
      { name: "ack", make: (r) => ack(r), now: true },
      {
        name: "stale nonce",
        make: (r) => ack({ ...(r as DeltaDiscoveryResponse), nonce: "old" }),
        now: true,
      },
      { name: "subscribe", make: (r) => ack(r, { resourceNamesSubscribe: ["b"] }), now: false },
      { name: "nack", make: (r) => nack(r), now: true },
      { name: "unsubscribe", make: (r) => ack(r, { resourceNamesUnsubscribe: ["b"] }), now: false },
      { name: "no nonce", make: () => req({ typeUrl: EDS }), now: false },
    ];
    let later = sub.later.at(-1);
    let now = sub.now.at(-1);
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
    }
  });
});
