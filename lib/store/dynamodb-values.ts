/**
 * How the DynamoDB adapter holds a store value in a binary attribute: codec.ts's encoding (JSON
 * with bytes as base64, the one the SQL stores keep), as UTF-8, deflated when that is smaller, behind
 * a one-byte tag. Compact because DynamoDB bills and limits items by their bytes (1 KB write units,
 * 400 KB items): an endpoint shard's JSON deflates several times.
 */
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { decodeValue, encodeValue } from "./codec.ts";

const plain = 0;
const deflated = 1;

/** Values from this size on are tried deflated (below it the saving is a few bytes at best). */
const deflateFrom = 512;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A value's stored bytes; throws codec.ts's TypeError, naming where, on what is not plain data. */
export function valueToBytes(value: unknown): Uint8Array {
  const text = encoder.encode(encodeValue(value));
  if (text.length >= deflateFrom) {
    const packed = deflateRawSync(text);
    if (packed.length < text.length) return tagged(deflated, packed);
  }
  return tagged(plain, text);
}

/** The value `valueToBytes` encoded: a fresh copy on every call. */
export function bytesToValue<T>(bytes: Uint8Array): T {
  const body = bytes.subarray(1);
  switch (bytes[0]) {
    case plain:
      return decodeValue<T>(decoder.decode(body));
    case deflated:
      return decodeValue<T>(decoder.decode(inflateRawSync(body)));
    default:
      throw new Error(`dynamodb store: a value with an unknown encoding tag ${bytes[0]}`);
  }
}

function tagged(tag: number, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(body.length + 1);
  out[0] = tag;
  out.set(body, 1);
  return out;
}

/** Splits bytes into pieces of at most `size` (views, no copy). */
export function splitBytes(bytes: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, at + size));
  return out;
}

/** Joins pieces back into one array. */
export function joinBytes(pieces: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const p of pieces) length += p.length;
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
