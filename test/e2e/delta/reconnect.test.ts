/**
 * Delta ADS conformance over the real server, part 3: initial_resource_versions. A proxy that
 * reconnects (to the same control plane, or to a second process fed the same events) says what it
 * holds; content-hash versions make "nothing changed" mean "nothing resent".
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RunningControlPlane, startControlPlane } from "../support/runtime.ts";
import { type DeltaStream, openDelta } from "./delta-client.ts";
import {
  apply,
  CDS,
  EDS,
  LDS,
  names,
  node,
  podEvent,
  RDS,
  serviceEvents,
  sliceEvent,
  summary,
} from "./mesh.ts";

let first: RunningControlPlane;
let second: RunningControlPlane;
const streams: DeltaStream[] = [];
const open = (cp: RunningControlPlane) => {
  const s = openDelta(cp.xdsPort);
  streams.push(s);
  return s;
};
const reviews = names("reviews");
const ratings = names("ratings");
const types = [CDS, EDS, LDS, RDS];
/** What the proxy subscribes to, per type: wildcard LDS/CDS, named EDS/RDS. */
const subscriptions: Record<string, string[]> = {
  [CDS]: ["*"],
  [EDS]: [reviews.cluster, ratings.cluster],
  [LDS]: ["*"],
  [RDS]: [reviews.listener, ratings.listener],
};
/** What the proxy held after its first stream, per type. */
const held = new Map<string, Map<string, string>>();

/** Opens a stream to `cp` saying, for every type, what the proxy holds (with `edit` applied). */
function reconnect(
  cp: RunningControlPlane,
  edit: (typeUrl: string, h: Map<string, string>) => void = () => {},
) {
  const s = open(cp);
  for (const typeUrl of types) {
    const h = new Map(held.get(typeUrl));
    edit(typeUrl, h);
    s.send({
      node: node("reconnecting"),
      typeUrl,
      resourceNamesSubscribe: subscriptions[typeUrl],
      initialResourceVersions: Object.fromEntries(h),
    });
  }
  return s;
}

beforeAll(async () => {
  [first, second] = await Promise.all([
    startControlPlane({ PILOT_DEBOUNCE_AFTER: "5ms" }),
    startControlPlane({ PILOT_DEBOUNCE_AFTER: "5ms" }),
  ]);
  // The same events, resourceVersions included, to both processes.
  const events = [
    ...serviceEvents("reviews", ["10.3.0.1", "10.3.0.2"]),
    ...serviceEvents("ratings", ["10.3.1.1"]),
  ];
  await Promise.all([apply(first, events), apply(second, events)]);
  const s = open(first);
  for (const typeUrl of types) {
    s.send({ node: node("reconnecting"), typeUrl, resourceNamesSubscribe: subscriptions[typeUrl] });
  }
  const responses = await s.drain();
  expect(summary(responses).map((l) => l.slice(0, 3))).toEqual(["cds", "eds", "lds", "rds"]);
  for (const r of responses) s.send({ typeUrl: r.typeUrl, responseNonce: r.nonce });
  for (const typeUrl of types) held.set(typeUrl, s.holds(typeUrl));
  expect(held.get(EDS)?.size).toBe(2);
  s.close();
});
afterEach(() => {
  for (const s of streams.splice(0)) s.close();
});
afterAll(async () => {
  await Promise.all([first?.stop(), second?.stop()]);
});

describe("Delta ADS: initial_resource_versions", () => {
  it("resends nothing to a proxy that holds everything (same control plane)", async () => {
    const s = reconnect(first);
    expect(await s.next(300)).toBeUndefined();
  });

  it("resends what changed and removes held names that no longer exist", async () => {
    const s = reconnect(first, (typeUrl, h) => {
      if (typeUrl === EDS) h.set(reviews.cluster, "0000000000000000");
      if (typeUrl === CDS) h.set("outbound|9080||gone.default.svc.cluster.local", "0000000000000000");
    });
    expect(summary(await s.drain())).toEqual([
      "cds -outbound|9080||gone.default.svc.cluster.local",
      `eds +${reviews.cluster}`,
    ]);
  });

  it("resends nothing after reconnecting to a second control plane fed the same events", async () => {
    const s = reconnect(second);
    expect(await s.next(300)).toBeUndefined();
    s.send({ typeUrl: EDS, resourceNamesSubscribe: ["outbound|1||absent.default.svc.cluster.local"] });
    const r = await s.next(); // the stream is live: a new name is answered
    expect(r?.removedResources).toEqual(["outbound|1||absent.default.svc.cluster.local"]);
  });

  it("sends exactly the changed resource after reconnecting to a second control plane where one changed", async () => {
    await apply(second, [podEvent("ratings", "10.3.1.2"), sliceEvent("ratings", ["10.3.1.2"])]);
    const s = reconnect(second);
    const responses = await s.drain();
    expect(summary(responses)).toEqual([`eds +${ratings.cluster}`]);
    expect(responses[0]?.resources[0]?.version).not.toBe(held.get(EDS)?.get(ratings.cluster));
  });
});
