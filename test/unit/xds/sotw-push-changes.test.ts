/**
 * SotW pushes that name what changed (the push signal's changes): a type none of whose
 * subscribed names changed is not read, EDS/RDS answer just the changed names from the change
 * feed, LDS/CDS still the whole set, and every answer equals a full re-read's.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  DiscoveryRequestSchema,
  type DiscoveryResponse,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { StatusSchema } from "../../../lib/gen/google/rpc/status_pb.ts";
import type { ResourceChange } from "../../../lib/resources/changes.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { createSotwSession } from "../../../lib/xds/sotw.ts";
import { createStoreSource, type ResourceSource } from "../../../lib/xds/source.ts";

const { cluster: CDS, endpoint: EDS, listener: LDS, route: RDS } = TypeUrl;

const resource = (typeUrl: TypeUrl, name: string, version: string): StoredResource => ({
  typeUrl,
  name,
  version,
  body: new TextEncoder().encode(`${name}@${version}`),
  service: "ns/h",
});

/** A session over a store whose source counts the names it reads. */
function harness() {
  const store = createMemoryStore();
  const inner = createStoreSource(store);
  const reads: string[] = [];
  const source: ResourceSource = {
    get(typeUrl, names) {
      reads.push(...names);
      return inner.get(typeUrl, names);
    },
    list(typeUrl) {
      reads.push(`list ${typeUrl}`);
      return inner.list(typeUrl);
    },
  };
  let n = 0;
  const session = createSotwSession({ source, nonce: () => `n${++n}` });
  return { session, store, reads };
}

/** Two sessions in lockstep over two stores: one pushed full re-reads, one pushed only the changes. */
function pair(options: { bodies: boolean }) {
  const full = harness();
  const aware = harness();
  let changes: ResourceChange[] = [];
  const both = async (fn: (h: ReturnType<typeof harness>) => Promise<unknown>) => {
    await fn(full);
    await fn(aware);
  };
  return {
    full,
    aware,
    async publish(typeUrl: TypeUrl, name: string, version = "v1") {
      const r = resource(typeUrl, name, version);
      await both((h) => h.store.put(keys.resource(typeUrl, name), r));
      changes.push(options.bodies ? { ...r } : { typeUrl, name, version });
    },
    async remove(typeUrl: TypeUrl, name: string) {
      await both((h) => h.store.delete(keys.resource(typeUrl, name)));
      changes.push({ typeUrl, name, version: null });
    },
    async request(r: MessageInitShape<typeof DiscoveryRequestSchema> & { typeUrl: string }) {
      const q = create(DiscoveryRequestSchema, r);
      return { full: await full.session.onRequest(q), aware: await aware.session.onRequest(q) };
    },
    async push() {
      const pushed = changes;
      changes = [];
      full.reads.length = 0;
      aware.reads.length = 0;
      return { full: await full.session.onPush(), aware: await aware.session.onPush(undefined, pushed) };
    },
  };
}

const show = (rs: readonly DiscoveryResponse[]) =>
  rs.map((r) => ({
    type: r.typeUrl.split(".").pop(),
    version: r.versionInfo,
    nonce: r.nonce,
    carried: r.resources.map((a) => new TextDecoder().decode(a.value)),
  }));

/** The names each type is subscribed to in these tests (a SotW ACK repeats them). */
const subscribed: Record<string, string[]> = { [EDS]: ["a", "b", "late"], [RDS]: ["r1", "r2"] };

const ackOf = (r: DiscoveryResponse | undefined, error?: string) =>
  create(DiscoveryRequestSchema, {
    typeUrl: r?.typeUrl ?? "",
    resourceNames: subscribed[r?.typeUrl ?? ""] ?? [],
    versionInfo: error ? "" : (r?.versionInfo ?? ""),
    responseNonce: r?.nonce ?? "",
    ...(error && { errorDetail: create(StatusSchema, { code: 3, message: error }) }),
  });

async function ackAll(
  p: ReturnType<typeof pair>,
  out: { full: DiscoveryResponse[]; aware: DiscoveryResponse[] },
) {
  for (const r of out.full) await p.full.session.onRequest(ackOf(r));
  for (const r of out.aware) await p.aware.session.onRequest(ackOf(r));
}

describe("SotW push with the changes named", () => {
  it.each([
    { bodies: true },
    { bodies: false },
  ])("answers EDS exactly as a full re-read: updates, removals, late names, unrelated changes (bodies in the feed: $bodies)", async ({
    bodies,
  }) => {
    const p = pair({ bodies });
    for (const name of ["a", "b", "other"]) await p.publish(EDS, name);
    await ackAll(p, await p.request({ typeUrl: EDS, resourceNames: subscribed[EDS] }));
    await p.push();
    const steps: [string, () => Promise<unknown>, string[][]][] = [
      ["an unsubscribed name changes", () => p.publish(EDS, "other", "v2"), []],
      ["a subscribed name changes", () => p.publish(EDS, "a", "v2"), [["a@v2"]]],
      ["a subscribed name is removed", () => p.remove(EDS, "b"), [[]]],
      ["a name asked for early appears", () => p.publish(EDS, "late"), [["late@v1"]]],
      ["a name is published at the version held", () => p.publish(EDS, "a", "v2"), []],
    ];
    for (const [what, step, carried] of steps) {
      await step();
      const out = await p.push();
      expect(show(out.aware), what).toEqual(show(out.full));
      expect(
        out.aware.map((r) => r.resources.map((a) => new TextDecoder().decode(a.value))),
        what,
      ).toEqual(carried);
      // The aware session reads only changed names, and none at all when the feed carries them.
      if (bodies) expect(p.aware.reads, what).toEqual([]);
      else expect(p.aware.reads.length, what).toBeLessThanOrEqual(1);
      await ackAll(p, out);
    }
    expect(p.aware.session.status()).toEqual(p.full.session.status());
  });

  it("does not resend a NACKed version on a later push; sends it again once it changes", async () => {
    const p = pair({ bodies: true });
    await p.publish(RDS, "r1");
    await p.publish(RDS, "r2");
    await ackAll(p, await p.request({ typeUrl: RDS, resourceNames: subscribed[RDS] }));
    await p.publish(RDS, "r1", "bad");
    const bad = await p.push();
    expect(show(bad.aware)).toEqual(show(bad.full));
    await p.full.session.onRequest(ackOf(bad.full[0], "rejected"));
    await p.aware.session.onRequest(ackOf(bad.aware[0], "rejected"));
    await p.publish(RDS, "r1", "bad"); // the same version again: nothing to send
    const same = await p.push();
    expect(same).toEqual({ full: [], aware: [] });
    await p.publish(RDS, "r1", "good");
    const fixed = await p.push();
    expect(show(fixed.aware)).toEqual(show(fixed.full));
    expect(show(fixed.aware)[0]?.carried).toEqual(["r1@good"]);
    expect(p.aware.session.status()).toEqual(p.full.session.status());
  });

  it("leaves LDS/CDS unread when no subscribed name changed, and answers the whole set when one did", async () => {
    const p = pair({ bodies: true });
    await p.publish(CDS, "c1");
    await p.publish(LDS, "l1");
    await p.publish(EDS, "e1");
    await ackAll(p, await p.request({ typeUrl: CDS }));
    await ackAll(p, await p.request({ typeUrl: LDS }));
    await p.push();
    await p.publish(EDS, "e1", "v2"); // nobody here subscribes to EDS
    const quiet = await p.push();
    expect(quiet).toEqual({ full: [], aware: [] });
    expect(p.aware.reads).toEqual([]);
    await p.publish(CDS, "c2");
    const grown = await p.push();
    expect(show(grown.aware)).toEqual(show(grown.full));
    expect(show(grown.aware).map((r) => r.carried)).toEqual([["c1@v1", "c2@v1"]]);
    await ackAll(p, grown);
    await p.remove(CDS, "c1");
    const shrunk = await p.push();
    expect(show(shrunk.aware)).toEqual(show(shrunk.full));
    expect(show(shrunk.aware).map((r) => r.carried)).toEqual([["c2@v1"]]);
  });

  it("re-reads everything on a push without changes (a recovered flush)", async () => {
    const p = pair({ bodies: true });
    await p.publish(EDS, "a");
    await ackAll(p, await p.request({ typeUrl: EDS, resourceNames: subscribed[EDS] }));
    await p.push();
    // Published without a push naming it: only a push without changes finds it.
    await p.aware.store.put(keys.resource(EDS, "a"), resource(EDS, "a", "v9"));
    expect(await p.aware.session.onPush(undefined, [])).toEqual([]);
    const [r] = await p.aware.session.onPush();
    expect(r?.resources.map((a) => new TextDecoder().decode(a.value))).toEqual(["a@v9"]);
  });
});
