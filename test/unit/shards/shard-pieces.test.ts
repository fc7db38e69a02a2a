import { describe, expect, it } from "vitest";
import type { Endpoint } from "../../../lib/model/index.ts";
import {
  maxPieceEndpoints,
  type PieceSlot,
  placeEndpoints,
  shardFromPieces,
} from "../../../lib/shards/shard-pieces.ts";
import { numbered, numberedRange } from "./builders.ts";

const at = numbered;
const range = numberedRange;
const slot = (id: number, endpoints: Endpoint[]): PieceSlot => ({ id, endpoints });
/** What each piece holds, as endpoint numbers. */
const shape = (pieces: readonly PieceSlot[]) => pieces.map((p) => ({ id: p.id, n: p.endpoints.length }));

describe("placeEndpoints (the EndpointSlice controller's placement)", () => {
  const max = 4;
  const cases: {
    name: string;
    current: PieceSlot[];
    desired: Endpoint[];
    want: { pieces: { id: number; n: number }[]; written: number[]; removed: number[] };
  }[] = [
    {
      name: "nothing yet: new pieces filled to the bound, in canonical order",
      current: [],
      desired: range(0, 10),
      want: {
        pieces: [
          { id: 0, n: 4 },
          { id: 1, n: 4 },
          { id: 2, n: 2 },
        ],
        written: [0, 1, 2],
        removed: [],
      },
    },
    {
      name: "same endpoints: nothing written",
      current: [slot(0, range(0, 4)), slot(1, range(4, 6))],
      desired: range(0, 6),
      want: {
        pieces: [
          { id: 0, n: 4 },
          { id: 1, n: 2 },
        ],
        written: [],
        removed: [],
      },
    },
    {
      name: "one endpoint changed: updated in place, only its piece written",
      current: [slot(0, range(0, 4)), slot(1, range(4, 8))],
      desired: [...range(0, 5), at(5, { health: "UNHEALTHY" }), ...range(6, 8)],
      want: {
        pieces: [
          { id: 0, n: 4 },
          { id: 1, n: 4 },
        ],
        written: [1],
        removed: [],
      },
    },
    {
      name: "one gone and one new: the new one fills the piece rewritten anyway",
      current: [slot(0, range(0, 4)), slot(1, range(4, 8)), slot(2, range(8, 10))],
      desired: [...range(0, 5), ...range(6, 10), at(20)],
      want: {
        pieces: [
          { id: 0, n: 4 },
          { id: 1, n: 4 },
          { id: 2, n: 2 },
        ],
        written: [1],
        removed: [],
      },
    },
    {
      name: "a few new: into the unchanged piece closest to full that takes them all",
      current: [slot(0, range(0, 2)), slot(1, range(2, 5)), slot(2, range(5, 9))],
      desired: [...range(0, 9), at(20)],
      want: {
        pieces: [
          { id: 0, n: 2 },
          { id: 1, n: 4 },
          { id: 2, n: 4 },
        ],
        written: [1],
        removed: [],
      },
    },
    {
      name: "more new than any piece has room for: a new piece, the others untouched",
      current: [slot(0, range(0, 2)), slot(1, range(2, 5))],
      desired: [...range(0, 5), ...range(20, 23)],
      want: {
        pieces: [
          { id: 0, n: 2 },
          { id: 1, n: 3 },
          { id: 2, n: 3 },
        ],
        written: [2],
        removed: [],
      },
    },
    {
      name: "a piece emptied is removed",
      current: [slot(0, range(0, 4)), slot(1, range(4, 6))],
      desired: range(0, 4),
      want: { pieces: [{ id: 0, n: 4 }], written: [], removed: [1] },
    },
    {
      name: "a piece emptied and a new one needed: its id is reused (one rewrite, no delete)",
      current: [slot(0, range(0, 4)), slot(1, range(4, 8))],
      desired: [...range(0, 4), ...range(20, 24)],
      want: {
        pieces: [
          { id: 0, n: 4 },
          { id: 1, n: 4 },
        ],
        written: [1],
        removed: [],
      },
    },
    {
      name: "no endpoints: every piece removed",
      current: [slot(0, range(0, 4)), slot(3, range(4, 5))],
      desired: [],
      want: { pieces: [], written: [], removed: [0, 3] },
    },
    {
      name: "an endpoint held twice (a torn write) is kept once",
      current: [slot(0, range(0, 3)), slot(1, [at(1), at(3)])],
      desired: range(0, 4),
      want: {
        pieces: [
          { id: 0, n: 3 },
          { id: 1, n: 1 },
        ],
        written: [1],
        removed: [],
      },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const got = placeEndpoints(c.current, c.desired, max);
      expect({ pieces: shape(got.pieces), written: got.written, removed: got.removed }).toEqual(c.want);
      expect(shardFromPieces(got.pieces.map((p) => p.endpoints))).toEqual(c.desired);
      for (const p of got.pieces) expect(p.endpoints.length).toBeLessThanOrEqual(max);
    });
  }

  it("a changed endpoint is the desired one, and unchanged ones keep their stored objects", () => {
    const current = [slot(0, range(0, 4))];
    const sick = at(2, { health: "UNHEALTHY" });
    const got = placeEndpoints(current, [at(0), at(1), sick, at(3)], max);
    const piece = got.pieces[0]?.endpoints ?? [];
    expect(piece[2]).toBe(sick);
    expect(piece[0]).toBe(current[0]?.endpoints[0]);
  });
});

describe("shardFromPieces", () => {
  it("merges pieces into canonical order; a missing piece contributes nothing", () => {
    expect(shardFromPieces([[at(5), at(7)], undefined, [at(1), at(6)]])).toEqual([
      at(1),
      at(5),
      at(6),
      at(7),
    ]);
  });
});

describe("maxPieceEndpoints", () => {
  it("a full piece of joined endpoints with a pod's usual labels fits a Durable Object value (128 KiB) and a DynamoDB item (400 KB) with room", () => {
    // A pod of a Deployment as istiod sees it: its labels, Istio's, and the topology labels AugmentLabels adds.
    const labels = {
      app: "reviews-backend",
      version: "v2",
      "pod-template-hash": "7d9f8c6b5d",
      "security.istio.io/tlsMode": "istio",
      "service.istio.io/canonical-name": "reviews-backend",
      "service.istio.io/canonical-revision": "v2",
      "app.kubernetes.io/part-of": "bookinfo",
      "topology.kubernetes.io/region": "us-east-1",
      "topology.kubernetes.io/zone": "us-east-1a",
      "topology.istio.io/cluster": "east-production",
      "kubernetes.io/hostname": "ip-10-20-30-40.ec2.internal",
    };
    const piece = {
      endpoints: Array.from({ length: maxPieceEndpoints }, (_, i) =>
        at(i, {
          labels,
          serviceAccount: "spiffe://cluster.local/ns/bookinfo/sa/bookinfo-reviews-backend",
          locality: { region: "us-east-1", zone: "us-east-1a", subzone: "" },
        }),
      ),
    };
    const bytes = new TextEncoder().encode(JSON.stringify(piece)).length;
    const perEndpoint = bytes / maxPieceEndpoints;
    expect(perEndpoint).toBeGreaterThan(400);
    expect(perEndpoint).toBeLessThan(1000);
    expect(bytes).toBeLessThan(128 * 1024);
    expect(bytes * 5).toBeLessThan(400_000);
  });
});
