/**
 * SotW ADS, Fetch and Poll under a small byte budget: EDS/RDS cut into pieces (same version_info,
 * a nonce each), CDS/LDS over it refused, unary Fetch over it refused, Poll answering piece by piece.
 */
import { create, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  DiscoveryRequestSchema,
  type DiscoveryResponse,
  DiscoveryResponseSchema,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { StatusSchema } from "../../../lib/gen/google/rpc/status_pb.ts";
import type { ProxyStatus, StoredResource } from "../../../lib/resources/types.ts";
import { setVersion } from "../../../lib/resources/version.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import {
  deltaResourceBytes,
  envelopeBytes,
  ResponseTooLargeError,
  sotwResourceBytes,
} from "../../../lib/xds/budget.ts";
import { fetchDiscovery } from "../../../lib/xds/fetch.ts";
import { deltaStep, initialView, pollDelta } from "../../../lib/xds/poll.ts";
import { createSotwSession } from "../../../lib/xds/sotw.ts";
import { createStoreSource } from "../../../lib/xds/source.ts";
import { mutableSource, pollRequest, res, summary } from "./poll-support.ts";

const { cluster: CDS, endpoint: EDS } = TypeUrl;
const names = ["e1", "e2", "e3", "e4", "e5"];
/** Room for exactly two resources `<name>@v1` (two-character names) per response. */
const budget = envelopeBytes + 2 * sotwResourceBytes(res(EDS, "e1", "v1"));

function harness() {
  const store = createMemoryStore();
  const statuses: ProxyStatus[] = [];
  const lines: string[] = [];
  let n = 0;
  const session = createSotwSession({
    source: createStoreSource(store),
    nonce: () => `n${++n}`,
    onStatus: (s) => statuses.push(typeof s === "function" ? s() : s),
    maxResponseBytes: budget,
    log: (line) => lines.push(line),
  });
  const publish = (r: StoredResource) => store.put(keys.resource(r.typeUrl, r.name), r);
  return { session, store, statuses, lines, publish };
}

async function edsSetup() {
  const h = harness();
  for (const name of names) await h.publish(res(EDS, name, "v1"));
  const out = await h.session.onRequest(req({ typeUrl: EDS, resourceNames: names }));
  return { ...h, out };
}

const req = (o: MessageInitShape<typeof DiscoveryRequestSchema> & { typeUrl: string }) =>
  create(DiscoveryRequestSchema, o);
const ack = (r: DiscoveryResponse | undefined, resourceNames = names) =>
  req({ typeUrl: EDS, versionInfo: r?.versionInfo ?? "", responseNonce: r?.nonce ?? "", resourceNames });
const nack = (r: DiscoveryResponse | undefined) =>
  req({
    typeUrl: EDS,
    versionInfo: "",
    responseNonce: r?.nonce ?? "",
    resourceNames: names,
    errorDetail: create(StatusSchema, { code: 3, message: "bad piece" }),
  });
const carried = (r: DiscoveryResponse) => r.resources.map((a) => new TextDecoder().decode(a.value));
const allVersion = () => setVersion(names.map((name) => ({ name, version: "v1" })));

describe("SotW EDS over the budget", () => {
  it("goes out as pieces under the budget: same version_info (the whole answer's), a nonce each", async () => {
    const { out } = await edsSetup();
    expect(out.map(carried)).toEqual([["e1@v1", "e2@v1"], ["e3@v1", "e4@v1"], ["e5@v1"]]);
    expect(out.map((r) => r.nonce)).toEqual(["n1", "n2", "n3"]);
    const version = await allVersion();
    for (const r of out) {
      expect(r.versionInfo).toBe(version);
      expect(toBinary(DiscoveryResponseSchema, r).length).toBeLessThanOrEqual(budget);
    }
  });

  const cases: { name: string; answers: ["ack" | "nack", number][]; acked: boolean; nacked: boolean }[] = [
    {
      name: "an earlier piece ACKed: nothing recorded yet",
      answers: [["ack", 0]],
      acked: false,
      nacked: false,
    },
    {
      name: "every piece ACKed: the answer's version is ACKed",
      answers: [
        ["ack", 0],
        ["ack", 1],
        ["ack", 2],
      ],
      acked: true,
      nacked: false,
    },
    {
      name: "only the last ACKed: the answer's version is ACKed",
      answers: [["ack", 2]],
      acked: true,
      nacked: false,
    },
    {
      name: "one piece NACKed: recorded at once, and the last piece's ACK does not ACK the answer",
      answers: [
        ["ack", 0],
        ["nack", 1],
        ["ack", 2],
      ],
      acked: false,
      nacked: true,
    },
  ];
  for (const c of cases)
    it(`ACK/NACK: ${c.name}`, async () => {
      const h = await edsSetup();
      for (const [kind, i] of c.answers)
        expect(await h.session.onRequest(kind === "ack" ? ack(h.out[i]) : nack(h.out[i]))).toEqual([]);
      const eds = h.session.status().types[0];
      expect(eds?.ackedVersion).toBe(c.acked ? await allVersion() : undefined);
      expect(eds?.nack?.nonce).toBe(c.nacked ? "n2" : undefined);
      expect(eds?.sent?.nonce).toBe("n3");
    });

  it("a request naming an earlier piece's nonce is current: its new names are answered", async () => {
    const h = await edsSetup();
    await h.publish(res(EDS, "e6", "v1"));
    const out = await h.session.onRequest(ack(h.out[0], [...names, "e6"]));
    expect(out.flatMap(carried)).toEqual([...names, "e6"].map((n) => `${n}@v1`));
  });

  it("a nonce of an earlier answer is stale: ignored", async () => {
    const h = await edsSetup();
    await h.session.onRequest(ack(h.out[2]));
    await h.publish(res(EDS, "e1", "v2"));
    const pushed = await h.session.onPush();
    expect(pushed.map(carried)).toEqual([["e1@v2"]]);
    const before = h.statuses.length;
    expect(await h.session.onRequest(nack(h.out[1]))).toEqual([]);
    expect(h.statuses.length).toBe(before);
  });

  it("a resource larger than the budget alone is sent alone, and logged", async () => {
    const h = harness();
    for (const name of names) await h.publish(res(EDS, name, name === "e2" ? "x".repeat(budget) : "v1"));
    const out = await h.session.onRequest(req({ typeUrl: EDS, resourceNames: names }));
    expect(out.map((r) => carried(r).length)).toEqual([1, 1, 2, 1]);
    expect(h.lines).toEqual([
      expect.stringMatching(
        /^xds: sotw ClusterLoadAssignment "e2" for .* over EDGEPILOT_MAX_RESPONSE_BYTES=/,
      ),
    ]);
  });
});

describe("SotW CDS/LDS over the budget: refused, never truncated", () => {
  const cases: { name: string; clusters: number; refused: boolean }[] = [
    { name: "at the budget: one response with every cluster", clusters: 2, refused: false },
    {
      name: "one cluster over: ResponseTooLargeError naming the limit and the size, and a log line",
      clusters: 3,
      refused: true,
    },
  ];
  for (const c of cases)
    it(c.name, async () => {
      const h = harness();
      for (let i = 1; i <= c.clusters; i++) await h.publish(res(CDS, `c${i}`, "v1"));
      const answer = h.session.onRequest(
        req({ typeUrl: CDS, node: { id: "sidecar~1.2.3.4~p.ns~ns.svc.cluster.local" } }),
      );
      if (!c.refused) {
        const out = await answer;
        expect(out.map(carried)).toEqual([["c1@v1", "c2@v1"]]);
        return;
      }
      const size = envelopeBytes + 3 * sotwResourceBytes(res(CDS, "c1", "v1"));
      await expect(answer).rejects.toThrow(ResponseTooLargeError);
      await expect(answer).rejects.toThrow(
        `the Cluster answer is ${size} bytes, over EDGEPILOT_MAX_RESPONSE_BYTES=${budget}`,
      );
      expect(h.lines).toEqual([
        `xds: sotw Cluster answer for "sidecar~1.2.3.4~p.ns~ns.svc.cluster.local" is ${size} bytes, over ` +
          `EDGEPILOT_MAX_RESPONSE_BYTES=${budget}; cannot be split, stream refused with ResourceExhausted`,
      ]);
    });
});

describe("unary Fetch over the budget", () => {
  it("is refused whatever the type (one answer, and a stateless one cannot be continued)", async () => {
    const { source } = mutableSource(names.map((n) => res(EDS, n, "v1")));
    const request = create(DiscoveryRequestSchema, { typeUrl: EDS, resourceNames: names });
    await expect(fetchDiscovery(source, EDS, request, true, budget)).rejects.toThrow(
      /ClusterLoadAssignment answer is \d+ bytes, over EDGEPILOT_MAX_RESPONSE_BYTES/,
    );
    const within = await fetchDiscovery(source, EDS, request, true, budget * 4);
    expect(within.kind === "ok" && within.response.resources.length).toBe(5);
    // REST-JSON passes no budget: HTTP bodies have no message limit.
    expect((await fetchDiscovery(source, EDS, request)).kind).toBe("ok");
  });
});

describe("Poll and Watch over the budget", () => {
  const deltaBudget = envelopeBytes + 2 * deltaResourceBytes(res(EDS, "e1", "v1"));
  it("a poll answers the first piece; the next poll, holding it, the rest (removals last)", async () => {
    const { source } = mutableSource(names.map((n) => res(EDS, n, "v1")));
    const subscribe = [...names, "gone"];
    const first = await pollDelta(
      source,
      pollRequest(EDS, { resourceNamesSubscribe: subscribe }),
      100,
      true,
      deltaBudget,
    );
    if (first.kind !== "ok") throw new Error(first.message);
    expect(summary(first.response)).toEqual({ resources: { e1: "v1", e2: "v1" }, removed: [] });
    const held = Object.fromEntries(first.response.resources.map((r) => [r.name, r.version]));
    const next = await pollDelta(
      source,
      pollRequest(EDS, { resourceNamesSubscribe: subscribe, initialResourceVersions: held }),
      100,
      true,
      deltaBudget,
    );
    if (next.kind !== "ok") throw new Error(next.message);
    expect(summary(next.response)).toEqual({ resources: { e3: "v1", e4: "v1" }, removed: [] });
  });

  it("a Watch step yields every piece in order, removals with the last", async () => {
    const { source } = mutableSource(names.map((n) => res(EDS, n, "v1")));
    const query = {
      typeUrl: EDS,
      sub: { wildcard: false, names: new Set([...names, "gone"]) },
      held: new Map(),
    };
    const step = await deltaStep(source, query, initialView(query), true, deltaBudget);
    expect(step.responses.map(summary)).toEqual([
      { resources: { e1: "v1", e2: "v1" }, removed: [] },
      { resources: { e3: "v1", e4: "v1" }, removed: [] },
      { resources: { e5: "v1" }, removed: ["gone"] },
    ]);
    expect(step.response).toBe(step.responses[0]);
    expect([...step.view.held.keys()]).toEqual(names);
  });
});
