/**
 * The limits' case suite, run against every runtime with the same small limits (`testLimits`):
 * each refusal is a clear error naming its variable, and whoever is within the limits is served
 * as before: open Watches keep getting pushes, plain polls and REST keep answering.
 */
import { type Client, Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { DeltaPollService } from "../../../lib/gen/edgepilot/xds/v1/poll_pb.ts";
import { ClusterDiscoveryService } from "../../../lib/gen/envoy/service/cluster/v3/cds_pb.ts";
import { events, golden, initial, names, ratingsEndpointNotReady, TypeUrl } from "./scenario.ts";
import { openWatch, pollRequest, summary, until } from "./suite.ts";

export { testLimits } from "./test-limits.ts";

/** What a runtime gives the suite. */
export interface LimitsHarness {
  /** Connect transports; all of them reach the same instance (one stream budget). */
  transports: Transport[];
  /** POSTs a body to a REST path. */
  post(path: string, body: string): Promise<Response>;
  /** Ingests events and resolves once the push they cause is published. */
  apply(events: unknown[]): Promise<void>;
  /** Open Watch streams plus waiting polls on the server, where the runtime can say. */
  open?(): Promise<number>;
}

async function refusal(p: Promise<unknown>): Promise<ConnectError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  return err as ConnectError;
}

/** Registers the suite; `harness` is called once the runtime is up (in beforeAll). */
export function describeLimitsSuite(runtime: string, harness: () => LimitsHarness) {
  let h: LimitsHarness;
  let clients: Client<typeof DeltaPollService>[];
  beforeAll(async () => {
    h = harness();
    clients = h.transports.map((t) => createClient(DeltaPollService, t));
    await h.apply(events);
  });
  const many = (n: number, length = 10) =>
    Array.from({ length: n }, (_, i) => `outbound|${i}||${"x".repeat(length)}.svc.cluster.local`);

  describe(`limits on ${runtime}`, () => {
    it("EDGEPILOT_MAX_NAMES_PER_REQUEST: more names, or held versions, than 50 ▶ InvalidArgument", async () => {
      const c = clients[0]!;
      const err = await refusal(c.poll(pollRequest(TypeUrl.endpoint, many(51))));
      expect(err.code).toBe(Code.InvalidArgument);
      expect(err.rawMessage).toMatch(
        /has 51 names; at most 50 per request \(EDGEPILOT_MAX_NAMES_PER_REQUEST\)/,
      );
      const held = Object.fromEntries(many(51).map((n) => [n, "1"]));
      const w = await refusal(openWatch(c, pollRequest(TypeUrl.endpoint, [], held)).next());
      expect(w.rawMessage).toMatch(/initial_resource_versions has 51 entries; at most 50/);
      const rest = await h.post("/v3/discovery:endpoints", JSON.stringify({ resourceNames: many(51) }));
      expect(rest.status).toBe(400);
      expect(await rest.json()).toEqual({
        error: "resource_names has 51 names; at most 50 per request (EDGEPILOT_MAX_NAMES_PER_REQUEST)",
      });
      expect((await c.poll(pollRequest(TypeUrl.endpoint, many(50)))).removedResources).toHaveLength(50);
    });

    it("EDGEPILOT_MAX_REQUEST_BYTES: a body over 8192 bytes ▶ ResourceExhausted / 413", async () => {
      const big = many(40, 300);
      const err = await refusal(clients[0]!.poll(pollRequest(TypeUrl.endpoint, big)));
      expect(err.code).toBe(Code.ResourceExhausted);
      expect(err.rawMessage).toMatch(/larger than configured readMaxBytes 8192/);
      const rest = await h.post("/v3/discovery:endpoints", JSON.stringify({ resourceNames: big }));
      expect(rest.status).toBe(413);
      expect(await rest.json()).toEqual({ error: "body over 8192 bytes (EDGEPILOT_MAX_REQUEST_BYTES)" });
      // Envoy's unary Fetch RPCs on the same transport are bounded alike (XDS_PORT, the Worker's root).
      const fetchClusters = createClient(ClusterDiscoveryService, h.transports[0]!).fetchClusters;
      const fetchErr = await refusal(fetchClusters({ resourceNames: big }));
      expect(fetchErr.code).toBe(Code.ResourceExhausted);
      expect(fetchErr.rawMessage).toMatch(/larger than configured readMaxBytes 8192/);
    });

    it("EDGEPILOT_MAX_STREAMS: a 4th Watch or waiting poll ▶ ResourceExhausted; the 3 open ones still get every push", async () => {
      const eds = [names.ratings];
      const held = { [names.ratings]: initial[TypeUrl.endpoint][names.ratings]! };
      const watches = [0, 1, 2].map((i) =>
        openWatch(clients[i % clients.length]!, pollRequest(TypeUrl.endpoint, eds)),
      );
      for (const w of watches) expect((await summary(await w.next())).resources).toEqual(held);
      if (h.open) expect(await h.open()).toBe(3);

      for (const c of clients) {
        const err = await refusal(openWatch(c, pollRequest(TypeUrl.endpoint, eds)).next());
        expect(err.code).toBe(Code.ResourceExhausted);
        expect(err.rawMessage).toMatch(
          /^Watch refused: this instance already holds 3 open Watch streams and waiting polls \(EDGEPILOT_MAX_STREAMS=3\)/,
        );
        const poll = await refusal(c.poll(pollRequest(TypeUrl.endpoint, eds, held, 5_000)));
        expect(poll.rawMessage).toMatch(/^long poll refused: .*EDGEPILOT_MAX_STREAMS=3/);
        // Polls that answer at once need no place, and REST is unaffected.
        const now = await c.poll(pollRequest(TypeUrl.endpoint, eds, held));
        expect((await summary(now)).resources).toEqual({});
        const news = await c.poll(pollRequest(TypeUrl.endpoint, eds, {}, 5_000));
        expect((await summary(news)).resources).toEqual(held);
        expect((await h.post("/v3/discovery:clusters", "{}")).status).toBe(200);
      }

      // One push reaches every open Watch.
      await h.apply(ratingsEndpointNotReady());
      const want = { resources: { [names.ratings]: golden.ratingsAfterNotReady }, removed: [] };
      for (const w of watches) expect(await summary(await w.next())).toEqual(want);

      // A client that goes away frees its place.
      await watches[0]!.close();
      if (h.open) await until(async () => (await h.open!()) === 2);
      let reopened: ReturnType<typeof openWatch> | undefined;
      await until(async () => {
        const w = openWatch(clients[0]!, pollRequest(TypeUrl.endpoint, eds));
        const ok = await w.next().then(
          () => true,
          () => false,
        );
        if (ok) reopened = w;
        return ok;
      });
      watches[0] = reopened!;
      for (const w of watches) await w.close();
      if (h.open) await until(async () => (await h.open!()) === 0);
      // Every place is free again, whichever transport held it: three new Watches open.
      const fresh: ReturnType<typeof openWatch>[] = [];
      await until(async () => {
        const w = openWatch(clients[fresh.length % clients.length]!, pollRequest(TypeUrl.endpoint, eds));
        if (
          await w.next().then(
            () => true,
            () => false,
          )
        )
          fresh.push(w);
        return fresh.length === 3;
      });
      for (const w of fresh) await w.close();
    });
  });
}
