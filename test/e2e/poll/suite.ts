/**
 * DeltaPollService's case suite, run against every runtime: test/e2e/poll/poll.test.ts (Node, the
 * real child process, Connect over h2c and HTTP/1.1) and test/workers/poll.test.ts (the Worker and
 * its MeshStore on workerd). Cases run in order over one mesh (scenario.ts); every version is
 * checked against the fixture's or scenario.ts's golden values, so both runtimes agree byte for byte.
 */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import { type Client, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { DeltaPollService, type PollRequestSchema } from "../../../lib/gen/edgepilot/xds/v1/poll_pb.ts";
import type { DeltaDiscoveryResponse } from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { resourceVersion, setVersion } from "../../../lib/resources/version.ts";
import { checkDeltaResponse } from "../../support/xds-check.ts";
import {
  detailsAdded,
  events,
  golden,
  initial,
  names,
  ratingsDeleted,
  ratingsEndpointNotReady,
  type ServedType,
  TypeUrl,
} from "./scenario.ts";

/** What a runtime gives the suite. */
export interface PollHarness {
  /** Connect transports by name (JSON, binary, HTTP versions); the first one drives the push cases. */
  transports: Record<string, Transport>;
  /** Ingests events and resolves once the push they cause is published. */
  apply(events: unknown[]): Promise<void>;
  /** Open Watch streams plus waiting polls on the server, where the runtime can say. */
  open?(): Promise<number>;
}

type PollClient = Client<typeof DeltaPollService>;
type PollInit = MessageInitShape<typeof PollRequestSchema>;

/** A PollRequest; `waitMs` becomes the wait Duration. */
export function pollRequest(
  typeUrl: string,
  subscribe: string[],
  held: Record<string, string> = {},
  waitMs?: number,
): PollInit {
  return {
    request: { typeUrl, resourceNamesSubscribe: subscribe, initialResourceVersions: held },
    ...(waitMs !== undefined && {
      wait: create(DurationSchema, {
        seconds: BigInt(Math.floor(waitMs / 1000)),
        nanos: (waitMs % 1000) * 1e6,
      }),
    }),
  };
}

/**
 * Resource name ─▶ version and removals; checks every Any is of the type, hashes to its version and
 * passes Envoy's PGV rules.
 */
export async function summary(r: DeltaDiscoveryResponse) {
  checkDeltaResponse(r);
  for (const res of r.resources) {
    expect(res.resource?.typeUrl).toBe(r.typeUrl);
    expect(await resourceVersion(res.resource!.value)).toBe(res.version);
  }
  return {
    resources: Object.fromEntries(r.resources.map((x) => [x.name, x.version])),
    removed: r.removedResources,
  };
}

/** A Watch read one message at a time. */
export function openWatch(client: PollClient, req: PollInit) {
  const abort = new AbortController();
  const it = client.watch(req, { signal: abort.signal })[Symbol.asyncIterator]();
  return {
    async next(): Promise<DeltaDiscoveryResponse> {
      const r = await it.next();
      if (r.done) throw new Error("the Watch ended");
      return r.value;
    },
    /** Stops reading and cancels the response body: the server sees the client go. */
    async close() {
      await it.return?.();
      abort.abort();
    },
  };
}

const pick = (type: ServedType, ...ns: string[]) => Object.fromEntries(ns.map((n) => [n, initial[type][n]!]));
const eds = [names.reviews, names.ratings];

/** Registers the suite; `harness` is called once the runtime is up (in beforeAll). */
export function describePollSuite(runtime: string, harness: () => PollHarness) {
  let h: PollHarness;
  let client: PollClient;
  beforeAll(async () => {
    h = harness();
    client = createClient(DeltaPollService, Object.values(h.transports)[0]!);
    await h.apply(events);
  });

  describe(`DeltaPollService on ${runtime}: Poll over every transport`, () => {
    it("a first poll gets everything subscribed, and names what does not exist in removed_resources", async () => {
      for (const [name, transport] of Object.entries(h.transports)) {
        const c = createClient(DeltaPollService, transport);
        const r = await c.poll(pollRequest(TypeUrl.endpoint, [...eds, names.missing]));
        expect(await summary(r), name).toEqual({
          resources: pick(TypeUrl.endpoint, ...eds),
          removed: [names.missing],
        });
        const held = eds.map((n) => ({ name: n, version: initial[TypeUrl.endpoint][n]! }));
        expect(r.systemVersionInfo, name).toBe(await setVersion(held));
        const all = await c.poll(pollRequest(TypeUrl.cluster, []));
        expect((await summary(all)).resources, name).toEqual(initial[TypeUrl.cluster]);
      }
    });

    it("a poll holding the current versions gets an empty delta", async () => {
      for (const [name, transport] of Object.entries(h.transports)) {
        const c = createClient(DeltaPollService, transport);
        const r = await c.poll(pollRequest(TypeUrl.endpoint, eds, pick(TypeUrl.endpoint, ...eds)));
        expect(await summary(r), name).toEqual({ resources: {}, removed: [] });
        const l = await c.poll(pollRequest(TypeUrl.listener, [], initial[TypeUrl.listener]));
        expect(await summary(l), name).toEqual({ resources: {}, removed: [] });
      }
    });

    it("a bad request is InvalidArgument naming the field", async () => {
      const err = await client
        .poll({ request: { typeUrl: TypeUrl.endpoint, responseNonce: "1" } })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConnectError);
      expect((err as ConnectError).code).toBe(3); // InvalidArgument
      expect((err as ConnectError).rawMessage).toMatch(/^request\.response_nonce must be empty/);
    });

    it("a poll or Watch carrying a NACK (error_detail) is answered as without it; a bad one is InvalidArgument", async () => {
      const node = {
        id: "sidecar~10.9.0.1~nacker.default~default.svc.cluster.local",
        metadata: { GENERATOR: "grpc" },
      };
      const held = pick(TypeUrl.endpoint, names.reviews);
      const nacking = (code: number, message: string): PollInit => ({
        request: {
          typeUrl: TypeUrl.endpoint,
          resourceNamesSubscribe: eds,
          initialResourceVersions: held,
          node,
          errorDetail: { code, message },
        },
      });
      for (const [name, transport] of Object.entries(h.transports)) {
        const c = createClient(DeltaPollService, transport);
        const want = await summary(await c.poll(pollRequest(TypeUrl.endpoint, eds, held)));
        expect(await summary(await c.poll(nacking(13, `${name}: rejected`))), name).toEqual(want);
        const watch = openWatch(c, nacking(13, `${name}: rejected`));
        expect(await summary(await watch.next()), name).toEqual(want);
        await watch.close();
      }
      const err = await client.poll(nacking(0, "ok is no NACK")).catch((e: unknown) => e);
      expect((err as ConnectError).code).toBe(3); // InvalidArgument
      expect((err as ConnectError).rawMessage).toMatch(/^request\.error_detail\.code must be non-zero/);
    });
  });

  describe(`DeltaPollService on ${runtime}: long poll and Watch across pushes`, () => {
    it("a long poll with nothing new answers the empty delta when its wait ends", async () => {
      const started = performance.now();
      const r = await client.poll(pollRequest(TypeUrl.endpoint, eds, pick(TypeUrl.endpoint, ...eds), 300));
      expect(await summary(r)).toEqual({ resources: {}, removed: [] });
      expect(performance.now() - started).toBeGreaterThanOrEqual(250);
    });

    it("a changed endpoint: the long poll returns, the Watch sends, a poll gets exactly that ClusterLoadAssignment", async () => {
      const watch = openWatch(client, pollRequest(TypeUrl.endpoint, eds));
      expect(await summary(await watch.next())).toEqual({
        resources: pick(TypeUrl.endpoint, ...eds),
        removed: [],
      });
      const held = pick(TypeUrl.endpoint, ...eds);
      let answered = false;
      const waiting = client.poll(pollRequest(TypeUrl.endpoint, eds, held, 30_000)).finally(() => {
        answered = true;
      });
      // Held: the server says so where it can; elsewhere it is still unanswered a while later.
      if (h.open) await until(async () => (await h.open!()) === 2);
      else await new Promise((r) => setTimeout(r, 200));
      expect(answered).toBe(false);

      await h.apply(ratingsEndpointNotReady());
      const want = { resources: { [names.ratings]: golden.ratingsAfterNotReady }, removed: [] };
      expect(await summary(await waiting)).toEqual(want);
      expect(await summary(await watch.next())).toEqual(want);
      expect(await summary(await client.poll(pollRequest(TypeUrl.endpoint, eds, held)))).toEqual(want);

      // A push that changes nothing it subscribes to sends nothing: the next message is the removal.
      await h.apply(detailsAdded());
      await h.apply(ratingsDeleted());
      expect(await summary(await watch.next())).toEqual({ resources: {}, removed: [names.ratings] });
      await watch.close();
      if (h.open) await until(async () => (await h.open!()) === 0);
    });

    it("a deleted service: its names in removed_resources", async () => {
      const clusters = { ...initial[TypeUrl.cluster] };
      const r = await client.poll(pollRequest(TypeUrl.cluster, [], clusters));
      expect(await summary(r)).toEqual({
        resources: { [names.details]: golden.detailsCluster },
        removed: [names.ratings],
      });
      const l = await client.poll(
        pollRequest(TypeUrl.listener, [names.ratingsListener], pick(TypeUrl.listener, names.ratingsListener)),
      );
      expect(await summary(l)).toEqual({ resources: {}, removed: [names.ratingsListener] });
    });
  });
}

/** Polls `cond` until it holds (bounded): server-side bookkeeping settles a moment after a client call. */
export async function until(cond: () => Promise<boolean>, tries = 200): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("condition never held");
}
