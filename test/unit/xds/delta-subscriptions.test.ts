/** Delta session: subscriptions by name, wildcard rules, names that do not exist, re-subscription. */
import { describe, expect, it } from "vitest";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { ack, harness, req, sent, summary } from "./delta-harness.ts";

const { listener: LDS, route: RDS, cluster: CDS, endpoint: EDS } = TypeUrl;

describe("Delta session: subscribing by name", () => {
  it("sends the subscribed resources as Resource { name, version, Any } and nothing else", async () => {
    const h = harness();
    await h.publish(EDS, "a", "va");
    await h.publish(EDS, "b", "vb");
    await h.publish(EDS, "c", "vc");
    const [r, ...rest] = await h.session.onRequest(req({ typeUrl: EDS, resourceNamesSubscribe: ["b", "a"] }));
    expect(rest).toEqual([]);
    expect(r).toMatchObject({ typeUrl: EDS, nonce: "n1", removedResources: [] });
    expect(sent(r)).toEqual(["a@va", "b@vb"]);
  });

  it("adds names incrementally, sending only the new one", async () => {
    const h = harness();
    await h.publish(RDS, "a");
    await h.publish(RDS, "b");
    const [r1] = await h.session.onRequest(req({ typeUrl: RDS, resourceNamesSubscribe: ["a"] }));
    const [r2] = await h.session.onRequest(ack(r1, { resourceNamesSubscribe: ["b"] }));
    expect(sent(r2)).toEqual(["b@v1"]);
  });

  it("answers an unsubscription with nothing and stops sending the name", async () => {
    const h = harness();
    await h.publish(EDS, "a");
    await h.publish(EDS, "b");
    const [r1] = await h.session.onRequest(req({ typeUrl: EDS, resourceNamesSubscribe: ["a", "b"] }));
    expect(
      await h.session.onRequest(ack(r1, { resourceNamesUnsubscribe: ["b", "never-subscribed"] })),
    ).toEqual([]);
    await h.publish(EDS, "b", "v2");
    expect(await h.session.onPush()).toEqual([]);
    await h.remove(EDS, "b");
    expect(await h.session.onPush()).toEqual([]); // b is no longer tracked: no removal either
    expect(h.session.status().types[0]?.subscribed).toEqual(["a"]);
  });

  it("sends a name subscribed again even though the client seems to hold it (clients forget)", async () => {
    const h = harness();
    await h.publish(EDS, "a");
    const [r1] = await h.session.onRequest(req({ typeUrl: EDS, resourceNamesSubscribe: ["a", "gone"] }));
    expect(summary([r1])).toEqual(["eds +a@v1 -gone"]);
    const [r2] = await h.session.onRequest(ack(r1, { resourceNamesSubscribe: ["a", "gone"] }));
    expect(summary([r2])).toEqual(["eds +a@v1 -gone"]);
  });
});

describe("Delta session: names that do not exist", () => {
  it("reports a missing name in removed_resources once, and sends it when it appears", async () => {
    const h = harness();
    await h.publish(EDS, "a");
    const [r1] = await h.session.onRequest(req({ typeUrl: EDS, resourceNamesSubscribe: ["a", "later"] }));
    expect(summary([r1])).toEqual(["eds +a@v1 -later"]);
    expect(await h.session.onRequest(ack(r1))).toEqual([]);
    await h.publish(EDS, "a", "v2");
    expect(summary(await h.session.onPush())).toEqual(["eds +a@v2"]); // "later" not reported again
    await h.publish(EDS, "later");
    expect(summary(await h.session.onPush())).toEqual(["eds +later@v1"]);
    await h.remove(EDS, "later");
    expect(summary(await h.session.onPush())).toEqual(["eds -later"]);
    expect(await h.session.onPush()).toEqual([]);
  });

  it("removes a held resource that stops existing, once", async () => {
    const h = harness();
    await h.publish(CDS, "c1");
    await h.publish(CDS, "c2");
    const [r1] = await h.session.onRequest(req({ typeUrl: CDS }));
    await h.session.onRequest(ack(r1));
    await h.remove(CDS, "c2");
    const [rm] = await h.session.onPush();
    expect(summary([rm])).toEqual(["cds -c2"]);
    expect(await h.session.onPush()).toEqual([]);
    await h.session.onRequest(ack(rm));
    expect(await h.session.onPush()).toEqual([]);
    expect(h.statuses.at(-1)?.types[0]?.sent?.versions).toEqual({ c1: "v1" });
  });
});

describe("Delta session: wildcard", () => {
  it("treats a first LDS/CDS request naming nothing as the legacy wildcard", async () => {
    const h = harness();
    await h.publish(LDS, "l1");
    const [r1] = await h.session.onRequest(req({ typeUrl: LDS }));
    expect(sent(r1)).toEqual(["l1@v1"]);
    await h.publish(LDS, "l2");
    expect(summary(await h.session.onPush())).toEqual(["lds +l2@v1"]);
    expect(h.session.status().types[0]).toMatchObject({ wildcard: true, subscribed: [] });
  });

  it("answers a first wildcard request in an empty mesh with an empty response", async () => {
    const h = harness();
    const [r] = await h.session.onRequest(req({ typeUrl: CDS, resourceNamesSubscribe: ["*"] }));
    expect(r).toMatchObject({ typeUrl: CDS, nonce: "n1", resources: [], removedResources: [] });
  });

  it("is no wildcard for EDS/RDS naming nothing, and '*' is a plain name there", async () => {
    const h = harness();
    await h.publish(EDS, "a");
    expect(await h.session.onRequest(req({ typeUrl: EDS }))).toEqual([]);
    const [r] = await h.session.onRequest(req({ typeUrl: RDS, resourceNamesSubscribe: ["*"] }));
    expect(summary([r])).toEqual(["rds -*"]);
  });

  it("after explicit names, an empty request is no wildcard; adding names to a legacy wildcard keeps it", async () => {
    const h = harness();
    await h.publish(CDS, "a");
    await h.publish(CDS, "b");
    const [r1] = await h.session.onRequest(req({ typeUrl: CDS, resourceNamesSubscribe: ["a"] }));
    expect(sent(r1)).toEqual(["a@v1"]);
    expect(await h.session.onRequest(ack(r1))).toEqual([]);
    await h.publish(CDS, "c");
    expect(await h.session.onPush()).toEqual([]);
    expect(h.session.status().types[0]?.wildcard).toBe(false);

    const w = harness();
    await w.publish(CDS, "a");
    const [w1] = await w.session.onRequest(req({ typeUrl: CDS }));
    expect(await w.session.onRequest(ack(w1, { resourceNamesSubscribe: ["x"] }))).toMatchObject([
      { removedResources: ["x"] },
    ]);
    await w.publish(CDS, "b");
    expect(summary(await w.session.onPush())).toEqual(["cds +b@v1"]);
  });

  it("ends the wildcard on '*' in unsubscribe: no response, no more wildcard resources", async () => {
    const h = harness();
    await h.publish(CDS, "a");
    await h.publish(CDS, "b");
    const [r1] = await h.session.onRequest(req({ typeUrl: CDS, resourceNamesSubscribe: ["*", "a"] }));
    expect(sent(r1)).toEqual(["a@v1", "b@v1"]);
    expect(await h.session.onRequest(ack(r1, { resourceNamesUnsubscribe: ["*"] }))).toEqual([]);
    await h.publish(CDS, "b", "v2");
    await h.publish(CDS, "c");
    await h.publish(CDS, "a", "v2");
    expect(summary(await h.session.onPush())).toEqual(["cds +a@v2"]);
    // b was reached only through the wildcard: no longer tracked, so subscribing to "*" again sends it.
    expect(h.session.status().types[0]?.sent?.versions).toEqual({ a: "v2" });
    const [r2] = await h.session.onRequest(req({ typeUrl: CDS, resourceNamesSubscribe: ["*"] }));
    expect(sent(r2)).toEqual(["b@v2", "c@v1"]);
  });

  it("resends a name unsubscribed while the wildcard still reaches it, and removes it when it does not exist", async () => {
    const h = harness();
    await h.publish(LDS, "a");
    await h.publish(LDS, "b");
    const [r1] = await h.session.onRequest(req({ typeUrl: LDS, resourceNamesSubscribe: ["*", "a", "zz"] }));
    expect(summary([r1])).toEqual(["lds +a@v1 +b@v1 -zz"]);
    const [r2] = await h.session.onRequest(ack(r1, { resourceNamesUnsubscribe: ["a", "zz"] }));
    expect(summary([r2])).toEqual(["lds +a@v1 -zz"]);
    await h.publish(LDS, "a", "v2");
    expect(summary(await h.session.onPush())).toEqual(["lds +a@v2"]); // still delivered through "*"
    expect(await h.session.onRequest(ack(r2, { resourceNamesUnsubscribe: ["b"] }))).toEqual([]); // phantom
  });

  it("resends everything when '*' is subscribed again", async () => {
    const h = harness();
    await h.publish(CDS, "a");
    const [r1] = await h.session.onRequest(req({ typeUrl: CDS }));
    const [r2] = await h.session.onRequest(ack(r1, { resourceNamesSubscribe: ["*"] }));
    expect(sent(r2)).toEqual(["a@v1"]);
  });
});
