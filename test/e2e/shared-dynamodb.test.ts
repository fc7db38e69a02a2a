/**
 * Two instances, one mesh: two Node control planes (`npm start`'s main.ts, real ports) over ONE
 * DynamoDB table (dynalite started here), as behind a load balancer. One ingest POST to A; on B a
 * real Delta ADS stream, a SotW ADS stream and a Connect Watch opened before it converge on the
 * change A pushed (B's store follower announces it, EDGEPILOT_STORE_POLL_INTERVAL=100ms), with the
 * same versions A serves. Then B ingests and A's streams follow: either instance takes writes.
 */
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeltaPollService } from "../../lib/gen/edgepilot/xds/v1/poll_pb.ts";
import { type RunningDynalite, startDynalite } from "../support/dynalite.ts";
import { openDelta } from "./delta/delta-client.ts";
import { CDS, EDS, LDS, names, node, pushVersion, RDS, serviceEvents, sliceEvent } from "./delta/mesh.ts";
import { openAds } from "./support/ads-client.ts";
import { type RunningControlPlane, startControlPlane } from "./support/runtime.ts";

let dynalite: RunningDynalite;
let a: RunningControlPlane;
let b: RunningControlPlane;

const start = () =>
  startControlPlane({
    PILOT_DEBOUNCE_AFTER: "5ms",
    EDGEPILOT_STORE: "dynamodb",
    DYNAMODB_ENDPOINT: dynalite.endpoint,
    DYNAMODB_TABLE: dynalite.table,
    EDGEPILOT_STORE_POLL_INTERVAL: "100ms",
  });

beforeAll(async () => {
  dynalite = await startDynalite();
  a = await start();
  b = await start();
}, 60_000);
afterAll(async () => {
  await Promise.all([a, b].filter(Boolean).map((cp) => cp.stop()));
  await dynalite?.stop();
});

/** Polls `f` every 20 ms until it holds, for at most 10 s; the ms it took. */
async function eventually(what: string, f: () => boolean | Promise<boolean>): Promise<number> {
  const since = Date.now();
  while (!(await f())) {
    if (Date.now() - since > 10_000)
      throw new Error(`never: ${what}\n--- A:\n${a.output()}\n--- B:\n${b.output()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return Date.now() - since;
}

describe("two Node instances over one DynamoDB table", () => {
  it("an ingest on A reaches Delta, SotW and Watch streams on B; one on B reaches A", async () => {
    const reviews = names("reviews");
    const delta = openDelta(b.xdsPort);
    for (const [typeUrl, subscribe] of [
      [CDS, ["*"]],
      [EDS, [reviews.cluster]],
      [LDS, ["*"]],
      [RDS, [reviews.listener]],
    ] as const)
      delta.send({ node: node("on-b"), typeUrl, resourceNamesSubscribe: [...subscribe] });
    for (const r of await delta.drain()) delta.send({ typeUrl: r.typeUrl, responseNonce: r.nonce });
    const sotw = openAds(b.xdsPort);
    sotw.send({ node: node("sotw-on-b"), typeUrl: EDS, resourceNames: [reviews.cluster] });
    const watchAbort = new AbortController();
    const poll = createClient(
      DeltaPollService,
      createConnectTransport({ baseUrl: `http://127.0.0.1:${b.xdsPort}`, httpVersion: "2" }),
    );
    const watch = poll
      .watch(
        { request: { node: node("watch-on-b"), typeUrl: EDS, resourceNamesSubscribe: [reviews.cluster] } },
        { signal: watchAbort.signal },
      )
      [Symbol.asyncIterator]();
    const watched: string[] = [];
    void (async () => {
      for (;;) {
        const r = await watch.next().catch(() => ({ done: true as const, value: undefined }));
        if (r.done) return;
        for (const x of r.value.resources) watched.push(`${x.name}@${x.version}`);
      }
    })();

    const posted = Date.now();
    const res = await a.post(serviceEvents("reviews", ["10.7.0.1"]));
    expect(res.status, await res.text()).toBe(200);
    const answered = Date.now() - posted;
    const pushed = await eventually("A pushed", async () => (await pushVersion(a)) > 0n);
    const version = await pushVersion(a);

    // Delta on B: the cluster, its endpoints, the listener and route A published.
    const converged = await eventually("the Delta stream on B holds reviews", async () => {
      for (const r of await delta.drain(50, 200)) delta.send({ typeUrl: r.typeUrl, responseNonce: r.nonce });
      return delta.holds(EDS).has(reviews.cluster) && delta.holds(RDS).has(reviews.listener);
    });
    const convergedAt = Date.now();
    expect(delta.holds(CDS).has(reviews.cluster)).toBe(true);
    expect(await pushVersion(b)).toBe(version);
    // SotW on B: the ClusterLoadAssignment with the endpoint A ingested.
    await eventually("the SotW stream on B got reviews' endpoints", async () => {
      const r = await sotw.next(200);
      if (r)
        sotw.send({
          typeUrl: EDS,
          resourceNames: [reviews.cluster],
          responseNonce: r.nonce,
          versionInfo: r.versionInfo,
        });
      return r !== undefined && r.resources.length === 1;
    });
    // The Watch on B (the poll hub): the same version the Delta stream holds.
    const edsVersion = delta.holds(EDS).get(reviews.cluster);
    await eventually("the Watch on B got reviews' endpoints", () =>
      watched.includes(`${reviews.cluster}@${edsVersion}`),
    );
    console.log(
      `shared DynamoDB: the POST to A answered in ${answered} ms; A's push seen ${pushed} ms later; ` +
        `B's Delta stream held it ${converged} ms after that (${convergedAt - posted} ms after the POST)`,
    );

    // The other way: B ingests an endpoint change, A's Delta stream follows.
    const onA = openDelta(a.xdsPort);
    onA.send({ node: node("on-a"), typeUrl: EDS, resourceNamesSubscribe: [reviews.cluster] });
    for (const r of await onA.drain()) onA.send({ typeUrl: r.typeUrl, responseNonce: r.nonce });
    const before = onA.holds(EDS).get(reviews.cluster);
    expect(before).toBe(edsVersion);
    const again = await b.post([event2()]);
    expect(again.status, await again.text()).toBe(200);
    await eventually("A's Delta stream got B's endpoint change", async () => {
      for (const r of await onA.drain(50, 200)) onA.send({ typeUrl: r.typeUrl, responseNonce: r.nonce });
      const now = onA.holds(EDS).get(reviews.cluster);
      return now !== undefined && now !== before;
    });
    await eventually("B's Delta stream got its own change too", async () => {
      for (const r of await delta.drain(50, 200)) delta.send({ typeUrl: r.typeUrl, responseNonce: r.nonce });
      return delta.holds(EDS).get(reviews.cluster) === onA.holds(EDS).get(reviews.cluster);
    });
    expect(await pushVersion(a)).toBe(await pushVersion(b));
    for (const s of [delta, sotw, onA]) s.close();
    watchAbort.abort();
  }, 60_000);
});

/** reviews' slice with no endpoint left (ADDED 10.7.0.1 before). */
const event2 = () => sliceEvent("reviews", []);
