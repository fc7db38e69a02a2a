/** The response byte budget: exact resource sizes, and how answers are cut under it. */
import { create, toBinary } from "@bufbuild/protobuf";
import { AnySchema } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../lib/config.ts";
import {
  DeltaDiscoveryResponseSchema,
  DiscoveryResponseSchema,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import {
  defaultMaxResponseBytes,
  deltaResourceBytes,
  envelopeBytes,
  planDeltaPieces,
  removedNameBytes,
  sotwResourceBytes,
  splitByBudget,
} from "../../../lib/xds/budget.ts";
import { toResource } from "../../../lib/xds/poll.ts";

/** A resource whose body has `bodyBytes` bytes. */
const sized = (name: string, bodyBytes: number): StoredResource => ({
  typeUrl: TypeUrl.endpoint,
  name,
  version: "0123456789abcdef",
  body: new Uint8Array(bodyBytes).fill(7),
  service: "ns/h",
});

describe("resource sizes are exactly what the resource adds to an encoded response", () => {
  // Body and name lengths across varint boundaries (1, 2 and 3 byte lengths).
  const cases = [
    { name: "a", body: 0 },
    { name: "", body: 1 },
    { name: "outbound|9080||reviews.default.svc.cluster.local", body: 100 },
    { name: "b", body: 127 },
    { name: "c", body: 128 },
    { name: "d".repeat(200), body: 16_383 },
    { name: "é-unicode", body: 16_384 },
    { name: "big", body: 300_000 },
  ];
  for (const c of cases) {
    it(`name ${c.name.length} chars, body ${c.body} bytes`, () => {
      const r = sized(c.name, c.body);
      const base = { typeUrl: r.typeUrl, nonce: "n", systemVersionInfo: "v" };
      const delta = (resources: StoredResource[], removed: string[] = []) =>
        toBinary(
          DeltaDiscoveryResponseSchema,
          create(DeltaDiscoveryResponseSchema, {
            ...base,
            resources: resources.map(toResource),
            removedResources: removed,
          }),
        ).length;
      expect(delta([r]) - delta([])).toBe(deltaResourceBytes(r));
      expect(delta([], [c.name]) - delta([])).toBe(removedNameBytes(c.name));
      const sotw = (resources: StoredResource[]) =>
        toBinary(
          DiscoveryResponseSchema,
          create(DiscoveryResponseSchema, {
            typeUrl: r.typeUrl,
            nonce: "n",
            versionInfo: "v",
            resources: resources.map((x) => create(AnySchema, { typeUrl: x.typeUrl, value: x.body })),
          }),
        ).length;
      expect(sotw([r]) - sotw([])).toBe(sotwResourceBytes(r));
    });
  }
});

describe("splitByBudget", () => {
  const cases: { name: string; sizes: number[]; budget: number; want: number[][] }[] = [
    { name: "nothing: no pieces", sizes: [], budget: envelopeBytes + 100, want: [] },
    { name: "all fit: one piece", sizes: [30, 30, 40], budget: envelopeBytes + 100, want: [[30, 30, 40]] },
    {
      name: "one byte over: cut before the item that does not fit",
      sizes: [30, 30, 41],
      budget: envelopeBytes + 100,
      want: [[30, 30], [41]],
    },
    {
      name: "an item over the budget alone goes in a piece of its own",
      sizes: [10, 500, 10],
      budget: envelopeBytes + 100,
      want: [[10], [500], [10]],
    },
    {
      name: "order is kept",
      sizes: [60, 50, 40, 60],
      budget: envelopeBytes + 100,
      want: [[60], [50, 40], [60]],
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      expect(splitByBudget(c.sizes, (n) => n, c.budget)).toEqual(c.want);
    });
});

describe("planDeltaPieces", () => {
  const r = (name: string) => sized(name, 200);
  const one = deltaResourceBytes(r("a"));
  const budget = envelopeBytes + 2 * one; // two resources per piece
  const plan = (resources: StoredResource[], removed: string[], b = budget) =>
    planDeltaPieces(resources, removed, b).map((p) => [
      ...p.resources.map((x) => `+${x.name}`),
      ...p.removed.map((n) => `-${n}`),
    ]);
  const cases: { name: string; resources: string[]; removed: string[]; budget?: number; want: string[][] }[] =
    [
      { name: "nothing: one empty piece", resources: [], removed: [], want: [[]] },
      { name: "only removals: one piece", resources: [], removed: ["x", "y"], want: [["-x", "-y"]] },
      {
        name: "removals ride with the last piece when they fit",
        resources: ["a", "b", "c"],
        removed: ["x"],
        want: [
          ["+a", "+b"],
          ["+c", "-x"],
        ],
      },
      {
        name: "removals go alone after a full last piece",
        resources: ["a", "b", "c", "d"],
        removed: ["x"],
        want: [["+a", "+b"], ["+c", "+d"], ["-x"]],
      },
      {
        name: "removals over the budget are cut too, after every addition",
        resources: ["a"],
        removed: ["x".repeat(600), "y".repeat(600), "z"],
        budget: envelopeBytes + 1000,
        want: [["+a"], [`-${"x".repeat(600)}`], [`-${"y".repeat(600)}`, "-z"]],
      },
    ];
  for (const c of cases)
    it(c.name, () => {
      expect(plan(c.resources.map(r), c.removed, c.budget)).toEqual(c.want);
    });
});

describe("EDGEPILOT_MAX_RESPONSE_BYTES", () => {
  const cases: { name: string; value?: string; want: number | RegExp }[] = [
    { name: "default: 4 MiB less 64 KiB", want: defaultMaxResponseBytes },
    { name: "a number of bytes", value: "1048576", want: 1_048_576 },
    {
      name: "not a number",
      value: "4MiB",
      want: /EDGEPILOT_MAX_RESPONSE_BYTES=4MiB: not a positive whole number/,
    },
    {
      name: "smaller than two envelopes",
      value: "2000",
      want: /EDGEPILOT_MAX_RESPONSE_BYTES=2000: at least 2048 bytes/,
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      const parsed = parseConfig(c.value === undefined ? {} : { EDGEPILOT_MAX_RESPONSE_BYTES: c.value });
      if (typeof c.want === "number") {
        expect(parsed.ok && parsed.config.limits.maxResponseBytes).toBe(c.want);
      } else {
        expect(parsed.ok).toBe(false);
        expect(parsed.ok ? "" : parsed.errors.join("\n")).toMatch(c.want);
      }
    });
  it("the default is under gRPC's 4 MiB receive limit", () => {
    expect(defaultMaxResponseBytes).toBeLessThan(4 * 1024 * 1024);
  });
});
