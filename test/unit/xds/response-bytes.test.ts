/**
 * Responses encoded with each resource's bytes shared (lib/xds/response-bytes.ts) parse to the
 * same message as toBinary of the whole, Delta and SotW, with and without resources and removals.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  DeltaDiscoveryResponseSchema,
  DiscoveryResponseSchema,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { deltaResponse } from "../../../lib/xds/delta-response.ts";
import { sotwPieces } from "../../../lib/xds/response.ts";
import {
  encodeDeltaResponse,
  encodeSotwResponse,
  sharedAny,
  sharedResource,
} from "../../../lib/xds/response-bytes.ts";

const stored = (o: Partial<StoredResource> = {}): StoredResource => ({
  typeUrl: TypeUrl.endpoint,
  name: "outbound|9080||reviews.default.svc.cluster.local",
  version: "0123456789abcdef",
  body: new Uint8Array([10, 3, 97, 98, 99]),
  service: "default/reviews.default.svc.cluster.local",
  ...o,
});

const a = stored();
const b = stored({
  name: "outbound|9080||ratings.default.svc.cluster.local",
  body: new Uint8Array(300).fill(7),
});

describe("encodeDeltaResponse", () => {
  const cases: { name: string; resources: StoredResource[]; removed: string[] }[] = [
    { name: "empty (a wildcard's first answer)", resources: [], removed: [] },
    { name: "one resource", resources: [a], removed: [] },
    { name: "two resources and removals", resources: [a, b], removed: ["gone-1", "gone-2"] },
    { name: "removals only", resources: [], removed: ["gone"] },
  ];
  for (const c of cases) {
    it(`parses equal to toBinary of the whole: ${c.name}`, () => {
      const response = deltaResponse(TypeUrl.endpoint, c.resources, c.removed, "nonce-1", "00ff00ff00ff00ff");
      const bytes = encodeDeltaResponse(response);
      expect(fromBinary(DeltaDiscoveryResponseSchema, bytes)).toEqual(
        fromBinary(DeltaDiscoveryResponseSchema, toBinary(DeltaDiscoveryResponseSchema, response)),
      );
      expect(bytes.length).toBe(toBinary(DeltaDiscoveryResponseSchema, response).length);
    });
  }

  it("leaves `reserve` bytes free in front of the message", () => {
    const response = deltaResponse(TypeUrl.endpoint, [a], [], "n", "v");
    const bytes = encodeDeltaResponse(response, 5);
    expect([...bytes.subarray(0, 5)]).toEqual([0, 0, 0, 0, 0]);
    expect(fromBinary(DeltaDiscoveryResponseSchema, bytes.subarray(5))).toEqual(
      fromBinary(DeltaDiscoveryResponseSchema, toBinary(DeltaDiscoveryResponseSchema, response)),
    );
  });

  it("gives every stream the same frozen Resource of a stored resource; only the envelope differs", () => {
    const one = deltaResponse(TypeUrl.endpoint, [a], [], "nonce-1", "v1");
    const two = deltaResponse(TypeUrl.endpoint, [a], [], "nonce-2", "v2");
    expect(one.resources[0]).toBe(two.resources[0]);
    expect(Object.isFrozen(sharedResource(a))).toBe(true);
    expect(() => {
      (sharedResource(a) as { name: string }).name = "changed";
    }).toThrow(TypeError);
    expect(fromBinary(DeltaDiscoveryResponseSchema, encodeDeltaResponse(two)).nonce).toBe("nonce-2");
  });

  it("encodes a response whose resources are not shared (made elsewhere) the same way", () => {
    const response = create(DeltaDiscoveryResponseSchema, {
      typeUrl: TypeUrl.endpoint,
      nonce: "n",
      resources: [{ name: "x", version: "1", resource: { typeUrl: TypeUrl.endpoint, value: a.body } }],
    });
    const bytes = encodeDeltaResponse(response);
    (response.resources[0] as { name: string }).name = "y";
    expect(fromBinary(DeltaDiscoveryResponseSchema, encodeDeltaResponse(response)).resources[0]?.name).toBe(
      "y",
    );
    expect(fromBinary(DeltaDiscoveryResponseSchema, bytes).resources[0]?.name).toBe("x");
  });
});

describe("encodeSotwResponse", () => {
  it("parses equal to toBinary of the whole, the Any of a stored resource shared", () => {
    const [response] = sotwPieces(TypeUrl.endpoint, [a, b], "v1", () => "nonce-1", {
      budget: 1 << 20,
      splittable: true,
    });
    if (!response) throw new Error("no response");
    expect(response.resources[0]).toBe(sharedAny(a));
    expect(fromBinary(DiscoveryResponseSchema, encodeSotwResponse(response))).toEqual(
      fromBinary(DiscoveryResponseSchema, toBinary(DiscoveryResponseSchema, response)),
    );
  });
});
