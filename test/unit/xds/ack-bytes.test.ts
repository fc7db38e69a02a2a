/**
 * Plain Delta ACKs recognised by their bytes (lib/xds/ack-bytes.ts): exactly the requests toBinary
 * writes for { type_url, response_nonce } are recognised, as the message parsing gives; every other
 * request is left to the parser; a stream's expectations follow its responses, oldest first.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  type DeltaDiscoveryRequest,
  DeltaDiscoveryRequestSchema,
  DeltaDiscoveryResponseSchema,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { createDeltaAckExpectations, plainDeltaAck } from "../../../lib/xds/ack-bytes.ts";
import { deltaResponse } from "../../../lib/xds/delta-response.ts";
import { encodeDeltaResponse } from "../../../lib/xds/response-bytes.ts";

const bytesOf = (init: Parameters<typeof create<typeof DeltaDiscoveryRequestSchema>>[1]) =>
  toBinary(DeltaDiscoveryRequestSchema, create(DeltaDiscoveryRequestSchema, init));

const nonce = "0123456789abcdef-1a";

describe("plainDeltaAck", () => {
  it("recognises the plain ACK of a response as the message the parser gives", () => {
    for (const [typeUrl, n] of [
      [TypeUrl.endpoint, nonce],
      [TypeUrl.cluster, "n"],
      ["type.googleapis.com/some.Other", "é-✓"],
      [TypeUrl.listener, "x".repeat(300)],
    ] as const) {
      const bytes = bytesOf({ typeUrl, responseNonce: n });
      const got = plainDeltaAck(bytes, typeUrl, n);
      expect(got).toEqual(fromBinary(DeltaDiscoveryRequestSchema, bytes));
    }
  });

  it("returns a new message each time (a session may keep what it is handed); what they share is frozen", () => {
    const bytes = bytesOf({ typeUrl: TypeUrl.endpoint, responseNonce: nonce });
    const a = plainDeltaAck(bytes, TypeUrl.endpoint, nonce) as DeltaDiscoveryRequest;
    const b = plainDeltaAck(bytes, TypeUrl.endpoint, nonce) as DeltaDiscoveryRequest;
    expect(a).not.toBe(b);
    a.responseNonce = "changed";
    expect(b.responseNonce).toBe(nonce);
    // The empty lists are shared by every ACK: frozen, so one message cannot change another's.
    expect(() => a.resourceNamesSubscribe.push("x")).toThrow(TypeError);
    expect(() => {
      a.initialResourceVersions.x = "1";
    }).toThrow(TypeError);
    expect(b.resourceNamesSubscribe).toEqual([]);
    expect(b.initialResourceVersions).toEqual({});
  });

  it("leaves the shared writer clean: responses encoded after a comparison are toBinary's bytes", () => {
    const stored = {
      typeUrl: TypeUrl.endpoint,
      name: "a",
      version: "1",
      body: new Uint8Array([1, 2, 3]),
      service: "ns/a",
    };
    const response = deltaResponse(TypeUrl.endpoint, [stored], ["gone"], nonce, "0123456789abcdef");
    const expected = toBinary(DeltaDiscoveryResponseSchema, response);
    for (const n of [nonce, "other", "x".repeat(300)]) {
      plainDeltaAck(bytesOf({ typeUrl: TypeUrl.endpoint, responseNonce: nonce }), TypeUrl.endpoint, n);
      expect(encodeDeltaResponse(response)).toEqual(expected);
    }
  });

  it("leaves every other request to the parser", () => {
    const others: Parameters<typeof bytesOf>[0][] = [
      { typeUrl: TypeUrl.endpoint, responseNonce: "other" },
      { typeUrl: TypeUrl.cluster, responseNonce: nonce },
      { typeUrl: TypeUrl.endpoint, responseNonce: nonce, errorDetail: { code: 3, message: "bad" } },
      { typeUrl: TypeUrl.endpoint, responseNonce: nonce, resourceNamesSubscribe: ["a"] },
      { typeUrl: TypeUrl.endpoint, responseNonce: nonce, resourceNamesUnsubscribe: ["a"] },
      { typeUrl: TypeUrl.endpoint, responseNonce: nonce, initialResourceVersions: { a: "1" } },
      { typeUrl: TypeUrl.endpoint, responseNonce: nonce, node: { id: "n" } },
      { typeUrl: TypeUrl.endpoint },
      { responseNonce: nonce },
      {},
    ];
    for (const init of others) expect(plainDeltaAck(bytesOf(init), TypeUrl.endpoint, nonce)).toBeUndefined();
    // The same fields in another order, or followed by an unknown field, are parsed as ever.
    const typeUrl = bytesOf({ typeUrl: TypeUrl.endpoint });
    const n = bytesOf({ responseNonce: nonce });
    expect(plainDeltaAck(new Uint8Array([...n, ...typeUrl]), TypeUrl.endpoint, nonce)).toBeUndefined();
    const plain = bytesOf({ typeUrl: TypeUrl.endpoint, responseNonce: nonce });
    const unknown = new Uint8Array([...plain, 0x98, 0x06, 0x01]); // field 99, varint 1
    expect(plainDeltaAck(unknown, TypeUrl.endpoint, nonce)).toBeUndefined();
    expect(plainDeltaAck(plain.subarray(0, plain.length - 1), TypeUrl.endpoint, nonce)).toBeUndefined();
    expect(plainDeltaAck(plain, "", nonce)).toBeUndefined();
    expect(plainDeltaAck(bytesOf({ typeUrl: TypeUrl.endpoint }), TypeUrl.endpoint, "")).toBeUndefined();
  });
});

describe("createDeltaAckExpectations", () => {
  const ack = (typeUrl: string, n: string) => bytesOf({ typeUrl, responseNonce: n });

  it("matches each request against the oldest response not yet answered, in order", () => {
    const e = createDeltaAckExpectations();
    expect(e.recognise(ack(TypeUrl.endpoint, "1"))).toBeUndefined(); // nothing sent yet
    e.sent({ typeUrl: TypeUrl.cluster, nonce: "1" });
    e.sent({ typeUrl: TypeUrl.endpoint, nonce: "2" });
    expect(e.recognise(ack(TypeUrl.cluster, "1"))?.responseNonce).toBe("1");
    expect(e.recognise(ack(TypeUrl.endpoint, "2"))?.typeUrl).toBe(TypeUrl.endpoint);
    expect(e.recognise(ack(TypeUrl.endpoint, "2"))).toBeUndefined(); // answered already
  });

  it("drops the oldest whatever the request said: a NACK of it, then the next ACK is recognised", () => {
    const e = createDeltaAckExpectations();
    e.sent({ typeUrl: TypeUrl.endpoint, nonce: "1" });
    e.sent({ typeUrl: TypeUrl.endpoint, nonce: "2" });
    const nack = bytesOf({ typeUrl: TypeUrl.endpoint, responseNonce: "1", errorDetail: { message: "no" } });
    expect(e.recognise(nack)).toBeUndefined();
    expect(e.recognise(ack(TypeUrl.endpoint, "2"))?.responseNonce).toBe("2");
  });

  it("keeps the latest 16 responses: an ACK of one forgotten is left to the parser", () => {
    const e = createDeltaAckExpectations();
    for (let i = 0; i < 20; i++) e.sent({ typeUrl: TypeUrl.endpoint, nonce: String(i) });
    expect(e.recognise(ack(TypeUrl.endpoint, "0"))).toBeUndefined();
    for (let i = 5; i < 20; i++)
      expect(e.recognise(ack(TypeUrl.endpoint, String(i)))?.responseNonce).toBe(String(i));
  });
});
