/**
 * The one Subscription type (lib/xds/subscription.ts): its plain rules, and that a SotW and a
 * Delta stream holding the same resources report the same type status through it.
 */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { DiscoveryRequestSchema } from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { ProxyStatus } from "../../../lib/resources/types.ts";
import { createVersionMap } from "../../../lib/resources/version.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { createSotwSession } from "../../../lib/xds/sotw.ts";
import { createStoreSource } from "../../../lib/xds/source.ts";
import {
  inReach,
  noteLast,
  recordAck,
  recordNack,
  type Subscription,
  subscriptionStatus,
} from "../../../lib/xds/subscription.ts";
import { ack, harness, nack, req } from "./delta-harness.ts";

const { cluster: CDS, endpoint: EDS } = TypeUrl;

const sub = (o: Partial<Subscription> = {}): Subscription => ({
  typeUrl: EDS,
  wildcard: false,
  names: new Set(),
  returned: createVersionMap(),
  ...o,
});

describe("Subscription", () => {
  it("reaches a name through the wildcard or by name", () => {
    const cases = [
      { wildcard: false, names: ["a"], name: "a", reached: true },
      { wildcard: false, names: ["a"], name: "b", reached: false },
      { wildcard: true, names: [], name: "b", reached: true },
      { wildcard: false, names: [], name: "a", reached: false },
    ];
    for (const c of cases)
      expect(inReach(sub({ wildcard: c.wildcard, names: new Set(c.names) }), c.name), JSON.stringify(c)).toBe(
        c.reached,
      );
  });

  it("notes the last response in place, and lists what was returned only once one went out", () => {
    const s = sub({ names: new Set(["b", "a"]), returned: createVersionMap([["a", "v1"]]) });
    expect(subscriptionStatus(s)).toEqual({ typeUrl: EDS, wildcard: false, subscribed: ["a", "b"] });
    noteLast(s, "n1", "set1");
    const record = s.last;
    noteLast(s, "n2", "set2");
    expect(s.last).toBe(record);
    expect(subscriptionStatus(s).sent).toEqual({ versionInfo: "set2", nonce: "n2", versions: { a: "v1" } });
  });

  it("a NACK stands until the next ACK, which records its version", () => {
    const s = sub();
    recordAck(s, "set1");
    recordNack(s, "set1", "n2", "bad");
    expect(subscriptionStatus(s)).toMatchObject({
      ackedVersion: "set1",
      nack: { versionInfo: "set1", nonce: "n2", message: "bad" },
    });
    recordAck(s, "set2");
    const status = subscriptionStatus(s);
    expect(status.ackedVersion).toBe("set2");
    expect(status.nack).toBeUndefined();
  });

  it("a SotW and a Delta stream holding the same resources report the same status for the type", async () => {
    const h = harness();
    for (const name of ["a", "b"]) await h.publish(EDS, name);
    await h.publish(CDS, "c");
    let n = 0;
    const sotw = createSotwSession({ source: createStoreSource(h.store), nonce: () => `n${++n}` });
    const typeOf = (s: { status(): ProxyStatus }, typeUrl: string) =>
      s.status().types.find((t) => t.typeUrl === typeUrl);
    const sotwAck = (
      r: { typeUrl: string; versionInfo: string; nonce: string },
      names: string[],
      error = "",
    ) =>
      create(DiscoveryRequestSchema, {
        typeUrl: r.typeUrl,
        versionInfo: r.versionInfo,
        responseNonce: r.nonce,
        resourceNames: names,
        ...(error && { errorDetail: { code: 3, message: error } }),
      });
    // Named EDS: answered, ACKed, then a change NACKed.
    const [d1] = await h.session.onRequest(req({ typeUrl: EDS, resourceNamesSubscribe: ["a", "b"] }));
    const [s1] = await sotw.onRequest(
      create(DiscoveryRequestSchema, { typeUrl: EDS, resourceNames: ["a", "b"] }),
    );
    expect(typeOf(sotw, EDS)).toEqual(typeOf(h.session, EDS));
    await h.session.onRequest(ack(d1));
    if (s1) await sotw.onRequest(sotwAck(s1, ["a", "b"]));
    expect(typeOf(sotw, EDS)).toEqual(typeOf(h.session, EDS));
    await h.publish(EDS, "a", "v2");
    const [d2] = await h.session.onPush();
    const [s2] = await sotw.onPush();
    await h.session.onRequest(nack(d2, "bad"));
    // A SotW NACK echoes the version the proxy kept (the last ACKed), as Envoy does.
    if (s2 && s1) await sotw.onRequest(sotwAck({ ...s2, versionInfo: s1.versionInfo }, ["a", "b"], "bad"));
    const delta = typeOf(h.session, EDS);
    const sotwType = typeOf(sotw, EDS);
    expect(delta).toMatchObject({ nack: { nonce: "n2", message: "bad" } });
    // The same but for what the client is taken to hold after a NACK (protocol-specific): Delta's
    // returned set goes back to what the client holds for sure; SotW's stays the answer sent.
    expect(delta?.sent?.versions).toEqual({ a: "v1", b: "v1" });
    expect(sotwType?.sent?.versions).toEqual({ a: "v2", b: "v1" });
    const without = (t: typeof delta) => ({ ...t, sent: { ...t?.sent, versions: undefined } });
    expect(without(sotwType)).toEqual(without(delta));
    // Wildcard CDS (the legacy empty request): the same wildcard and returned set.
    await h.session.onRequest(req({ typeUrl: CDS }));
    await sotw.onRequest(create(DiscoveryRequestSchema, { typeUrl: CDS }));
    expect(typeOf(sotw, CDS)).toEqual(typeOf(h.session, CDS));
    expect(typeOf(sotw, CDS)).toMatchObject({ wildcard: true, sent: { versions: { c: "v1" } } });
  });
});
