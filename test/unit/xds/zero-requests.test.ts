/** The zero request literals (lib/xds/zero-requests.ts) are create()'s messages, and parse like fromBinary. */
import {
  create,
  type DescMessage,
  fromBinary,
  type MessageShape,
  mergeFromBinary,
  toBinary,
} from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  DeltaDiscoveryRequestSchema,
  DiscoveryRequestSchema,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { zeroDeltaRequest, zeroSotwRequest } from "../../../lib/xds/zero-requests.ts";

const node = { id: "sidecar~10.1.0.9~client.default~default.svc.cluster.local", cluster: "c" };

/** Each schema with its zero literal and requests of every shape a stream gets. */
const cases: {
  name: string;
  schema: DescMessage;
  zero: () => MessageShape<DescMessage>;
  requests: Record<string, unknown>[];
}[] = [
  {
    name: "DeltaDiscoveryRequest",
    schema: DeltaDiscoveryRequestSchema,
    zero: zeroDeltaRequest,
    requests: [
      {},
      { typeUrl: TypeUrl.endpoint, responseNonce: "0123456789abcdef-1a" },
      { typeUrl: TypeUrl.endpoint, responseNonce: "n", errorDetail: { code: 3, message: "bad ✗" } },
      {
        node,
        typeUrl: TypeUrl.cluster,
        resourceNamesSubscribe: ["*", "a"],
        initialResourceVersions: { a: "1" },
      },
      {
        typeUrl: TypeUrl.cluster,
        resourceNamesUnsubscribe: ["a"],
        resourceLocatorsSubscribe: [{ name: "x" }],
      },
    ],
  },
  {
    name: "DiscoveryRequest",
    schema: DiscoveryRequestSchema,
    zero: zeroSotwRequest,
    requests: [
      {},
      { versionInfo: "v", typeUrl: TypeUrl.endpoint, responseNonce: "n", resourceNames: ["a", "b"] },
      {
        node,
        typeUrl: TypeUrl.listener,
        errorDetail: { code: 3, message: "no" },
        resourceLocators: [{ name: "x" }],
      },
    ],
  },
];

describe("zero request messages", () => {
  it.each(cases)("$name: equal to create()'s, a new one each call", ({ schema, zero }) => {
    expect(zero()).toStrictEqual(create(schema));
    expect(zero()).not.toBe(zero());
  });

  it.each(cases)("$name: parsed into, equal to fromBinary's", ({ schema, zero, requests }) => {
    for (const init of requests) {
      const bytes = toBinary(schema, create(schema, init));
      expect(mergeFromBinary(schema, zero(), bytes)).toStrictEqual(fromBinary(schema, bytes));
    }
  });

  it("keeps unknown fields as fromBinary does", () => {
    // Field 99, varint 1: not in the schema.
    const bytes = new Uint8Array([
      ...toBinary(DeltaDiscoveryRequestSchema, create(DeltaDiscoveryRequestSchema, { typeUrl: "t" })),
      0x98,
      0x06,
      0x01,
    ]);
    const parsed = mergeFromBinary(DeltaDiscoveryRequestSchema, zeroDeltaRequest(), bytes);
    expect(parsed).toStrictEqual(fromBinary(DeltaDiscoveryRequestSchema, bytes));
    expect(parsed.$unknown).toHaveLength(1);
  });
});
