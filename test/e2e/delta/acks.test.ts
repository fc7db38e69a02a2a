/**
 * Delta ADS conformance over the real server, part 2: nonces and ACK/NACK, subscription changes
 * on a stale nonce, pushes carrying only what changed, make before break, system_version_info.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { setVersion } from "../../../lib/resources/version.ts";
import { type RunningControlPlane, startControlPlane } from "../support/runtime.ts";
import { type DeltaStream, openDelta } from "./delta-client.ts";
import {
  apply,
  CDS,
  deleteService,
  EDS,
  LDS,
  logged,
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
    ...serviceEvents("reviews", ["10.2.0.1", "10.2.0.2"]),
    ...serviceEvents("ratings", ["10.2.1.1"]),
  ]);
});
afterEach(() => {
  for (const s of streams.splice(0)) s.close();
});
afterAll(async () => {
  await cp?.stop();
});

describe("Delta ADS: nonces, ACK and NACK", () => {
  it("gives every response its own nonce and answers nothing to an ACK", async () => {
    const s = open();
    s.send({ node: node("acker"), typeUrl: CDS });
    s.send({ typeUrl: EDS, resourceNamesSubscribe: [reviews.cluster] });
    const [c, e] = await s.drain();
    expect([c?.typeUrl, e?.typeUrl]).toEqual([CDS, EDS]);
    expect(c?.nonce).not.toBe("");
    expect(c?.nonce).not.toBe(e?.nonce);
    s.send({ typeUrl: CDS, responseNonce: c?.nonce });
    s.send({ typeUrl: EDS, responseNonce: e?.nonce });
    expect(await s.next(300)).toBeUndefined();
  });

  it("honours subscription changes on a request carrying a stale nonce", async () => {
    const s = open();
    s.send({ node: node("stale"), typeUrl: EDS, resourceNamesSubscribe: [reviews.cluster] });
    const r1 = await s.next();
    s.send({ typeUrl: EDS, responseNonce: r1?.nonce });
    await apply(cp, [sliceEvent("reviews", ["10.2.0.1"])]);
    const r2 = await s.next(); // r1's nonce is stale now
    expect(summary([r2!])).toEqual([`eds +${reviews.cluster}`]);
    s.send({ typeUrl: EDS, responseNonce: r1?.nonce, resourceNamesSubscribe: [ratings.cluster] });
    const r3 = await s.next();
    expect(summary([r3!])).toEqual([`eds +${ratings.cluster}`]);
  });

  it("records a NACK (logged once), keeps the last good version, resends only once the resource changes", async () => {
    const s = open();
    s.send({
      node: node("nacker"),
      typeUrl: EDS,
      resourceNamesSubscribe: [ratings.cluster, reviews.cluster],
    });
    const r1 = await s.next();
    s.send({ typeUrl: EDS, responseNonce: r1?.nonce });
    await apply(cp, [podEvent("ratings", "10.2.1.2"), sliceEvent("ratings", ["10.2.1.1", "10.2.1.2"])]);
    const bad = await s.next();
    expect(summary([bad!])).toEqual([`eds +${ratings.cluster}`]);
    s.send({
      typeUrl: EDS,
      responseNonce: bad?.nonce,
      errorDetail: { code: 3, message: "endpoint 10.2.1.2 rejected by delta test" },
    });
    const kept = await setVersion(r1!.resources.map((r) => ({ name: r.name, version: r.version })));
    const line = new RegExp(
      `nacker\\.default.*" NACKed "${EDS}" \\(kept "${kept}"\\): "endpoint 10\\.2\\.1\\.2 rejected by delta test"`,
    );
    await logged(cp, line);
    // A push that does not touch the NACKed resource sends nothing; one that changes it does.
    await apply(cp, [sliceEvent("reviews", ["10.2.0.1", "10.2.0.2"])]);
    const next = await s.next();
    expect(summary([next!])).toEqual([`eds +${reviews.cluster}`]);
    s.send({ typeUrl: EDS, responseNonce: next?.nonce });
    expect(await s.next(300)).toBeUndefined();
    await apply(cp, [sliceEvent("ratings", ["10.2.1.2"])]);
    const fixed = await s.next();
    expect(summary([fixed!])).toEqual([`eds +${ratings.cluster}`]);
    expect(fixed?.resources[0]?.version).not.toBe(bad?.resources[0]?.version);
    expect(cp.output().match(new RegExp(line, "g"))).toHaveLength(1);
  });
});

describe("Delta ADS: pushes", () => {
  it("sends exactly the one ClusterLoadAssignment whose endpoint moved", async () => {
    const s = open();
    s.send({ node: node("mover"), typeUrl: CDS });
    s.send({ typeUrl: EDS, resourceNamesSubscribe: [reviews.cluster, ratings.cluster] });
    for (const r of await s.drain()) s.send({ typeUrl: r.typeUrl, responseNonce: r.nonce });
    await apply(cp, [sliceEvent("reviews", ["10.2.0.2"])]);
    const pushed = await s.drain();
    expect(pushed).toHaveLength(1);
    expect(pushed[0]?.typeUrl).toBe(EDS);
    expect(pushed[0]?.resources.map((r) => r.name)).toEqual([reviews.cluster]);
    expect(pushed[0]?.removedResources).toEqual([]);
  });

  it("makes before it breaks: additions CDS, EDS, LDS, RDS, then removals LDS, RDS, CDS, EDS", async () => {
    const s = open();
    const [old, fresh] = [names("old"), names("fresh")];
    await apply(cp, serviceEvents("old", ["10.2.5.1"]));
    s.send({ node: node("mbb"), typeUrl: CDS });
    s.send({ typeUrl: EDS, resourceNamesSubscribe: [old.cluster, fresh.cluster] });
    s.send({ typeUrl: LDS });
    s.send({ typeUrl: RDS, resourceNamesSubscribe: [old.listener, fresh.listener] });
    for (const r of await s.drain()) s.send({ typeUrl: r.typeUrl, responseNonce: r.nonce });
    // One batch, one push: the old service goes, a new one comes.
    await apply(cp, [deleteService("old"), ...serviceEvents("fresh", ["10.2.6.1"])]);
    const pushed = await s.drain();
    expect(summary(pushed)).toEqual([
      `cds +${fresh.cluster}`,
      `eds +${fresh.cluster}`,
      `lds +${fresh.listener}`,
      `rds +${fresh.listener}`,
      `lds -${old.listener}`,
      `rds -${old.listener}`,
      `cds -${old.cluster}`,
      `eds -${old.cluster}`,
    ]);
    // system_version_info: the set version of what the proxy holds of that type after the response.
    for (const r of pushed.slice(-4)) {
      const holds = [...s.holds(r.typeUrl)].map(([name, version]) => ({ name, version }));
      expect(r.systemVersionInfo).toBe(await setVersion(holds));
    }
  });
});
