/** gRPC request bytes for the direct gRPC path's reader tests (functions/node/grpc-messages.ts). */
import { create, toBinary } from "@bufbuild/protobuf";
import { DiscoveryRequestSchema } from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";

/** An encoded DiscoveryRequest of `typeUrl`. */
export const request = (typeUrl: string) =>
  toBinary(DiscoveryRequestSchema, create(DiscoveryRequestSchema, { typeUrl }));

/** A gRPC length-prefixed message. */
export function frame(data: Uint8Array, flags = 0): Uint8Array {
  const out = new Uint8Array(5 + data.length);
  out[0] = flags;
  new DataView(out.buffer).setUint32(1, data.length);
  out.set(data, 5);
  return out;
}

/** The parts as one byte array. */
export const join = (...parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts));
