/**
 * Small encoded responses share slabs (lib/xds/response-bytes.ts): every response keeps its own
 * bytes however many are encoded after it, small or large, and each parses to its own message.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { DeltaDiscoveryResponseSchema } from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { deltaResponse } from "../../../lib/xds/delta-response.ts";
import { encodeDeltaResponse } from "../../../lib/xds/response-bytes.ts";

const stored = (name: string, bytes: number): StoredResource => ({
  typeUrl: TypeUrl.endpoint,
  name,
  version: "0123456789abcdef",
  body: new Uint8Array(bytes).fill(name.length),
  service: "default/reviews.default.svc.cluster.local",
});

describe("encodeDeltaResponse in slabs", () => {
  it("keeps every response's bytes its own across slabs, small and large mixed", () => {
    const small = stored("small", 200);
    const large = stored("large-one", 5000);
    const encoded: { nonce: string; bytes: Uint8Array; resource: string }[] = [];
    for (let i = 0; i < 200; i++) {
      const r = i % 17 === 0 ? large : small;
      const nonce = `nonce-${i}`;
      const bytes = encodeDeltaResponse(deltaResponse(TypeUrl.endpoint, [r], [`gone-${i}`], nonce, "v"), 5);
      bytes[0] = 9; // the caller's prefix: its own bytes, touching no other response
      encoded.push({ nonce, bytes, resource: r.name });
    }
    for (const e of encoded) {
      expect(e.bytes[0]).toBe(9);
      const m = fromBinary(DeltaDiscoveryResponseSchema, e.bytes.subarray(5));
      expect([m.nonce, m.resources[0]?.name, m.removedResources]).toEqual([
        e.nonce,
        e.resource,
        [`gone-${e.nonce.slice(6)}`],
      ]);
    }
  });
});
