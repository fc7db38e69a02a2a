import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { addDemand, type Demand, deltaAsk, sotwAsk } from "../../../lib/agent/demand.ts";
import {
  DeltaDiscoveryRequestSchema,
  DiscoveryRequestSchema,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";

const CDS = TypeUrl.cluster;
const EDS = TypeUrl.endpoint;

describe("local asks", () => {
  it.each([
    {
      what: "SotW CDS naming nothing: wildcard",
      typeUrl: CDS,
      names: [],
      want: { names: [], wildcard: true },
    },
    { what: "SotW CDS *", typeUrl: CDS, names: ["*", "a"], want: { names: ["a"], wildcard: true } },
    { what: "SotW CDS names", typeUrl: CDS, names: ["a"], want: { names: ["a"], wildcard: false } },
    { what: "SotW EDS naming nothing: no ask", typeUrl: EDS, names: [], want: undefined },
    {
      what: "SotW EDS * is a plain name",
      typeUrl: EDS,
      names: ["*"],
      want: { names: ["*"], wildcard: false },
    },
    { what: "no type", typeUrl: "", names: ["a"], want: undefined },
  ])("$what", ({ typeUrl, names, want }) => {
    const ask = sotwAsk(create(DiscoveryRequestSchema, { typeUrl, resourceNames: names }));
    expect(ask).toEqual(want && { typeUrl, ...want });
  });

  it.each([
    {
      what: "first CDS naming nothing: legacy wildcard",
      first: true,
      sub: [],
      unsub: [],
      want: { names: [], wildcard: true },
    },
    { what: "later CDS naming nothing: an ACK", first: false, sub: [], unsub: [], want: undefined },
    {
      what: "first CDS unsubscribing only: no wildcard",
      first: true,
      sub: [],
      unsub: ["x"],
      want: undefined,
    },
    { what: "CDS *", first: false, sub: ["*"], unsub: [], want: { names: [], wildcard: true } },
    {
      what: "CDS names",
      first: false,
      sub: ["a", "b"],
      unsub: [],
      want: { names: ["a", "b"], wildcard: false },
    },
  ])("Delta: $what", ({ first, sub, unsub, want }) => {
    const req = create(DeltaDiscoveryRequestSchema, {
      typeUrl: CDS,
      resourceNamesSubscribe: sub,
      resourceNamesUnsubscribe: unsub,
    });
    expect(deltaAsk(req, first)).toEqual(want && { typeUrl: CDS, ...want });
  });

  it("the union only grows, and is the same map when nothing is new", () => {
    let d: Demand = new Map();
    d = addDemand(d, CDS, ["a"], false);
    const same = addDemand(d, CDS, ["a"], false);
    expect(same).toBe(d);
    d = addDemand(d, CDS, [], true);
    expect(d.get(CDS)).toEqual({ wildcard: true, names: new Set(["a"]) });
    expect(addDemand(d, CDS, ["a"], false)).toBe(d);
    d = addDemand(d, CDS, ["b"], false);
    expect(d.get(CDS)).toEqual({ wildcard: true, names: new Set(["a", "b"]) });
  });
});
