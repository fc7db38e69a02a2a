/**
 * Delta ADS conformance over the real server, part 1: subscriptions by name, names that do not
 * exist, removal of a ClusterLoadAssignment whose service is gone, re-subscription, wildcard rules.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type RunningControlPlane, startControlPlane } from "../support/runtime.ts";
import { type DeltaStream, openDelta } from "./delta-client.ts";
import {
  apply,
  CDS,
  deleteService,
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

let cp: RunningControlPlane;
const streams: DeltaStream[] = [];
const open = () => {
  const s = openDelta(cp.xdsPort);
  streams.push(s);
  return s;
};
const reviews = names("reviews");
const ratings = names("ratings");

beforeAll(async () => {
  cp = await startControlPlane({ PILOT_DEBOUNCE_AFTER: "5ms" });
  await apply(cp, [
    ...serviceEvents("reviews", ["10.1.0.1", "10.1.0.2"]),
    ...serviceEvents("ratings", ["10.1.1.1"]),
  ]);
});
afterEach(() => {
  for (const s of streams.splice(0)) s.close();
});
afterAll(async () => {
  await cp?.stop();
});

describe("Delta ADS: subscriptions by name", () => {
  it("sends what is subscribed, nothing after an unsubscription", async () => {
    const s = open();
    s.send({
      node: node("by-name"),
      typeUrl: EDS,
      resourceNamesSubscribe: [reviews.cluster, ratings.cluster],
    });
    const r1 = await s.next();
    expect(summary([r1!])).toEqual([`eds +${ratings.cluster} +${reviews.cluster}`]);
    expect(r1?.resources.every((r) => r.version.match(/^[0-9a-f]{16}$/) && r.resource?.typeUrl === EDS)).toBe(
      true,
    );
    s.send({ typeUrl: EDS, responseNonce: r1?.nonce, resourceNamesUnsubscribe: [ratings.cluster] });
    expect(await s.next(300)).toBeUndefined();
    await apply(cp, [podEvent("ratings", "10.1.1.2"), sliceEvent("ratings", ["10.1.1.1", "10.1.1.2"])]);
    expect(await s.next(300)).toBeUndefined();
  });

  it("reports a name that does not exist once, and sends it when it appears", async () => {
    const s = open();
    const ghost = names("ghost");
    s.send({
      node: node("ghost-watcher"),
      typeUrl: EDS,
      resourceNamesSubscribe: [ghost.cluster, reviews.cluster],
    });
    const r1 = await s.next();
    expect(summary([r1!])).toEqual([`eds +${reviews.cluster} -${ghost.cluster}`]);
    s.send({ typeUrl: EDS, responseNonce: r1?.nonce });
    await apply(cp, [sliceEvent("reviews", ["10.1.0.2"])]);
    const r2 = await s.next();
    expect(summary([r2!])).toEqual([`eds +${reviews.cluster}`]); // the ghost is not reported again
    s.send({ typeUrl: EDS, responseNonce: r2?.nonce });
    await apply(cp, serviceEvents("ghost", ["10.1.9.1"]));
    expect(summary(await s.drain())).toEqual([`eds +${ghost.cluster}`]);
  });

  it("removes the ClusterLoadAssignment of a deleted service, never sending it empty", async () => {
    const s = open();
    const ghost = names("ghost");
    s.send({ node: node("ghost-remover"), typeUrl: CDS, resourceNamesSubscribe: [ghost.cluster] });
    s.send({ typeUrl: EDS, resourceNamesSubscribe: [ghost.cluster] });
    const first = await s.drain();
    expect(summary(first)).toEqual([`cds +${ghost.cluster}`, `eds +${ghost.cluster}`]);
    for (const r of first) s.send({ typeUrl: r.typeUrl, responseNonce: r.nonce });
    await apply(cp, [deleteService("ghost")]); // the slice stays: endpoints without a service
    expect(summary(await s.drain())).toEqual([`cds -${ghost.cluster}`, `eds -${ghost.cluster}`]);
  });

  it("resends a name subscribed again, although the client apparently holds it", async () => {
    const s = open();
    s.send({ node: node("forgetful"), typeUrl: EDS, resourceNamesSubscribe: [reviews.cluster] });
    const r1 = await s.next();
    s.send({ typeUrl: EDS, responseNonce: r1?.nonce });
    expect(await s.next(300)).toBeUndefined();
    s.send({ typeUrl: EDS, resourceNamesSubscribe: [reviews.cluster] });
    const r2 = await s.next();
    expect(r2?.resources.map((r) => [r.name, r.version])).toEqual(
      r1?.resources.map((r) => [r.name, r.version]),
    );
  });
});

describe("Delta ADS: wildcard", () => {
  it("a whole-mesh subscription holds a consistent set: nothing names what is not served", async () => {
    const s = open();
    // As a proxy does: CDS and LDS wildcard, then the assignments and routes those name.
    s.send({ node: node("whole-mesh"), typeUrl: CDS, resourceNamesSubscribe: ["*"] });
    s.send({ typeUrl: LDS, resourceNamesSubscribe: ["*"] });
    for (const r of await s.drain()) s.send({ typeUrl: r.typeUrl, responseNonce: r.nonce });
    s.send({ typeUrl: EDS, resourceNamesSubscribe: [...s.holds(CDS).keys()] });
    s.send({ typeUrl: RDS, resourceNamesSubscribe: [...s.holds(LDS).keys()] });
    for (const r of await s.drain()) s.send({ typeUrl: r.typeUrl, responseNonce: r.nonce });
    for (const typeUrl of [CDS, EDS, LDS, RDS]) expect(s.holds(typeUrl).size, typeUrl).toBeGreaterThan(1);
    // Every resource already passed the PGV check on arrival (delta-client.ts); now the references.
    expect(s.dangling()).toEqual([]);
  });

  it("subscribes to everything on a first CDS/LDS request naming nothing (legacy), and to new resources", async () => {
    const s = open();
    s.send({ node: node("legacy"), typeUrl: CDS });
    s.send({ typeUrl: LDS });
    const first = await s.drain();
    expect(summary(first)).toEqual([
      `cds +${ratings.cluster} +${reviews.cluster}`,
      `lds +${ratings.listener} +${reviews.listener}`,
    ]);
    for (const r of first) s.send({ typeUrl: r.typeUrl, responseNonce: r.nonce });
    await apply(cp, serviceEvents("details", ["10.1.2.1"]));
    expect(summary(await s.drain())).toEqual([
      `cds +${names("details").cluster}`,
      `lds +${names("details").listener}`,
    ]);
  });

  it("is no wildcard once names were given: an empty request afterwards subscribes to nothing new", async () => {
    const s = open();
    s.send({ node: node("explicit"), typeUrl: CDS, resourceNamesSubscribe: [reviews.cluster] });
    const r1 = await s.next();
    expect(summary([r1!])).toEqual([`cds +${reviews.cluster}`]);
    s.send({ typeUrl: CDS, responseNonce: r1?.nonce });
    await apply(cp, serviceEvents("explicit-new", ["10.1.3.1"]));
    expect(await s.next(300)).toBeUndefined();
  });

  it("keeps a name unsubscribed under '*' in reach (resent), and ends the wildcard on '*' in unsubscribe", async () => {
    const s = open();
    s.send({ node: node("star"), typeUrl: CDS, resourceNamesSubscribe: ["*", reviews.cluster] });
    const r1 = await s.next();
    expect(r1?.resources.map((r) => r.name)).toContain(ratings.cluster);
    s.send({ typeUrl: CDS, responseNonce: r1?.nonce, resourceNamesUnsubscribe: [reviews.cluster] });
    const r2 = await s.next(); // the client cannot tell whether "*" still covers it: it is told
    expect(summary([r2!])).toEqual([`cds +${reviews.cluster}`]);
    s.send({ typeUrl: CDS, responseNonce: r2?.nonce, resourceNamesUnsubscribe: ["*"] });
    expect(await s.next(300)).toBeUndefined();
    await apply(cp, serviceEvents("after-star", ["10.1.4.1"]));
    expect(await s.next(300)).toBeUndefined();
    // What only the wildcard reached is no longer tracked: "*" again sends everything.
    s.send({ typeUrl: CDS, resourceNamesSubscribe: ["*"] });
    const r3 = await s.next();
    expect(r3?.resources.map((r) => r.name)).toEqual(
      expect.arrayContaining([reviews.cluster, ratings.cluster, names("after-star").cluster]),
    );
  });
});
