/**
 * A Delta stream's plain ACKs recognised by their bytes instead of parsed. Nearly every request on
 * an open Delta stream answers the oldest response not yet answered with exactly its type URL and
 * nonce, nothing else (the xDS protocol document's ACK); the server knows both, so it encodes that
 * request once with protobuf-es's BinaryWriter, as toBinary writes it (the type_url field, then the
 * response_nonce field; the fields it leaves unset are not written), and compares the bytes that
 * came (in the writer's buffer: response-bytes.ts endsWithWritten): equal bytes are that very message, so the request is built from the two strings already at
 * hand, with no reflective parse and no UTF-8 decoding per ACK. Any other bytes (a NACK, a
 * subscription change, another field order, unknown fields) are not recognised and are parsed as ever.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import { type BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import {
  type DeltaDiscoveryRequest,
  DeltaDiscoveryRequestSchema,
} from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import { endsWithWritten } from "./response-bytes.ts";

/** The encoded type_url field of a request, per type URL (toBinary's); bounded like response-bytes.ts's. */
const typeUrlFields = new Map<string, Uint8Array>();
const maxTypeUrls = 64;

function typeUrlField(typeUrl: string): Uint8Array {
  let bytes = typeUrlFields.get(typeUrl);
  if (bytes === undefined) {
    bytes = toBinary(DeltaDiscoveryRequestSchema, create(DeltaDiscoveryRequestSchema, { typeUrl }));
    if (typeUrlFields.size < maxTypeUrls) typeUrlFields.set(typeUrl, bytes);
  }
  return bytes;
}

const nonceField = DeltaDiscoveryRequestSchema.field.responseNonce.number;

/** The response_nonce field as toBinary writes it (a singular proto3 string, never empty here). */
function writeNonce(w: BinaryWriter, nonce: string): void {
  w.tag(nonceField, WireType.LengthDelimited).string(nonce);
}

/**
 * The request `bytes` encode when they are exactly toBinary of a DeltaDiscoveryRequest with
 * type_url `typeUrl` and response_nonce `nonce` and nothing else set (a new message, as parsing
 * them would give); undefined for any other bytes (parse them then).
 */
export function plainDeltaAck(
  bytes: Uint8Array,
  typeUrl: string,
  nonce: string,
): DeltaDiscoveryRequest | undefined {
  if (typeUrl === "" || nonce === "") return undefined;
  const head = typeUrlField(typeUrl);
  if (bytes.length <= head.length || !equalAt(bytes, 0, head)) return undefined;
  if (!endsWithWritten(bytes, head.length, nonce, writeNonce)) return undefined;
  return {
    $typeName: DeltaDiscoveryRequestSchema.typeName,
    typeUrl,
    resourceNamesSubscribe: noNames,
    resourceNamesUnsubscribe: noNames,
    resourceLocatorsSubscribe: noLocators,
    resourceLocatorsUnsubscribe: noLocators,
    initialResourceVersions: noVersions,
    responseNonce: nonce,
  };
}

/**
 * The empty fields of every plain ACK, shared and frozen: an ACK is one message per stream per
 * push, and nothing changes a request it is handed (each ACK is still its own message object).
 */
const noNames = Object.freeze([]) as unknown as string[];
const noLocators = Object.freeze([]) as unknown as DeltaDiscoveryRequest["resourceLocatorsSubscribe"];
const noVersions = Object.freeze({}) as DeltaDiscoveryRequest["initialResourceVersions"];

/** Whether `bytes` holds `part` at offset `at`. */
function equalAt(bytes: Uint8Array, at: number, part: Uint8Array): boolean {
  for (let i = 0; i < part.length; i++) if (bytes[at + i] !== part[i]) return false;
  return true;
}

/**
 * The responses of one stream whose plain ACK is expected, oldest first: `sent` notes each one
 * handed to the transport, `recognise` matches a request's bytes against the oldest (which the
 * request answers, whatever it says: a client answers in order, so the oldest is dropped either
 * way). Bounded: past `maxExpected` unanswered responses the oldest are forgotten (their ACKs are
 * parsed).
 */
export interface DeltaAckExpectations {
  /** A response handed to the transport (its type URL and nonce are what its ACK names). */
  sent(response: Expected): void;
  recognise(bytes: Uint8Array): DeltaDiscoveryRequest | undefined;
}

const maxExpected = 16;

/** What an ACK names of a response (a DeltaDiscoveryResponse is one). */
type Expected = { readonly typeUrl: string; readonly nonce: string };

/** The expectations of one Delta stream (see DeltaAckExpectations). */
export function createDeltaAckExpectations(): DeltaAckExpectations {
  // A ring of type URL and nonce pairs, oldest at `head`: the two strings only (the session keeps
  // them anyway), not the response, which then dies young; nothing allocated per response.
  const ring: string[] = [];
  let head = 0;
  let count = 0;
  return {
    sent({ typeUrl, nonce }) {
      if (count === maxExpected) {
        head = (head + 1) % maxExpected;
        count--;
      }
      const at = 2 * ((head + count) % maxExpected);
      ring[at] = typeUrl;
      ring[at + 1] = nonce;
      count++;
    },
    recognise(bytes) {
      if (count === 0) return undefined;
      const typeUrl = ring[2 * head] as string;
      const nonce = ring[2 * head + 1] as string;
      head = (head + 1) % maxExpected;
      count--;
      return plainDeltaAck(bytes, typeUrl, nonce);
    },
  };
}
