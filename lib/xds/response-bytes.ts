/**
 * Encodes xDS responses so that each resource is encoded once, not once per stream. A push hands
 * every stream the same resource objects (the change feed's, shared: lib/push/signal.ts), and the
 * response builders wrap each in one shared message (delta-response.ts sharedResource,
 * response.ts sharedAny); only the envelope (nonce, versions, type URL, removals) differs per
 * stream. Protobuf's merge by concatenation (the encoding guide: "concatenating two encoded
 * messages is the same as merging them"; repeated fields append) lets a response be written as
 * toBinary of its envelope followed by toBinary of each resource as a one-entry response, the
 * latter cached per shared message (and its type_url, the same for every response of a type,
 * cached per type URL). Both halves come from protobuf-es toBinary; the bytes parse to
 * the same message as toBinary of the whole (a parser takes fields in any order).
 */
import { create, type DescMessage, type MessageShape, toBinary } from "@bufbuild/protobuf";
import { type Any, AnySchema } from "@bufbuild/protobuf/wkt";
import {
  type DeltaDiscoveryResponse,
  DeltaDiscoveryResponseSchema,
  type DiscoveryResponse,
  DiscoveryResponseSchema,
  type Resource,
  ResourceSchema,
} from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { StoredResource } from "./types.ts";

/** The one Resource message of each stored resource, frozen (see sharedResource). */
const resources = new WeakMap<StoredResource, Resource>();
/** The one Any message of each stored resource, frozen (see sharedAny). */
const anys = new WeakMap<StoredResource, Any>();
/**
 * The bytes of each shared message as one entry of its response's `resources` field (tag, length,
 * message). Weak: an entry lives as long as its stored resource (a push's change, a read), never
 * longer; only messages made here are cached, and they are frozen, so an entry cannot go stale.
 */
const entryBytes = new WeakMap<object, Uint8Array>();

function anyOf(r: StoredResource): Any {
  return Object.freeze(create(AnySchema, { typeUrl: r.typeUrl, value: r.body }));
}

/**
 * The Delta Resource { name, version, resource = Any } of `r`: one frozen message per stored
 * resource object, so every stream sent the same resource shares it (and its encoding).
 */
export function sharedResource(r: StoredResource): Resource {
  let m = resources.get(r);
  if (m === undefined) {
    m = Object.freeze(create(ResourceSchema, { name: r.name, version: r.version, resource: anyOf(r) }));
    resources.set(r, m);
  }
  return m;
}

/** The SotW Any of `r`: one frozen message per stored resource object (as sharedResource). */
export function sharedAny(r: StoredResource): Any {
  let m = anys.get(r);
  if (m === undefined) {
    m = anyOf(r);
    anys.set(r, m);
  }
  return m;
}

/** The entry bytes of `message`: cached when it is a shared (frozen, made here) message. */
function entryOf<D extends DescMessage>(schema: D, message: object, wrap: () => MessageShape<D>): Uint8Array {
  let bytes = entryBytes.get(message);
  if (bytes === undefined) {
    bytes = toBinary(schema, wrap());
    if (Object.isFrozen(message)) entryBytes.set(message, bytes);
  }
  return bytes;
}

/**
 * The encoded type_url field of a response, per type URL: a type URL is longer than protobuf-es
 * encodes without a TextEncoder call, and the same in every response of its type. Bounded: the
 * served type URLs and what a few clients ask for; past `maxTypeUrls` it is encoded each time.
 */
const deltaTypeUrls = new Map<string, Uint8Array>();
const sotwTypeUrls = new Map<string, Uint8Array>();
const maxTypeUrls = 64;

function typeUrlBytes(
  schema: typeof DeltaDiscoveryResponseSchema | typeof DiscoveryResponseSchema,
  typeUrl: string,
  cache: Map<string, Uint8Array>,
): Uint8Array {
  let bytes = cache.get(typeUrl);
  if (bytes === undefined) {
    bytes = toBinary(schema, create(schema, { typeUrl }));
    if (cache.size < maxTypeUrls) cache.set(typeUrl, bytes);
  }
  return bytes;
}

/** `head` then every entry, in one buffer with `reserve` zero bytes before them (for a frame prefix). */
function join(head: Uint8Array, entries: readonly Uint8Array[], reserve: number): Uint8Array {
  let length = reserve + head.length;
  for (const e of entries) length += e.length;
  const out = new Uint8Array(length);
  out.set(head, reserve);
  let at = reserve + head.length;
  for (const e of entries) {
    out.set(e, at);
    at += e.length;
  }
  return out;
}

/**
 * The encoding of `response` (parses equal to toBinary's), after `reserve` zero bytes the caller
 * may fill (a gRPC frame prefix), each resource's bytes taken from the per-message cache.
 */
export function encodeDeltaResponse(response: DeltaDiscoveryResponse, reserve = 0): Uint8Array {
  const head = toBinary(DeltaDiscoveryResponseSchema, { ...response, typeUrl: "", resources: [] });
  const entries = response.resources.map((r) =>
    entryOf(DeltaDiscoveryResponseSchema, r, () => create(DeltaDiscoveryResponseSchema, { resources: [r] })),
  );
  entries.push(typeUrlBytes(DeltaDiscoveryResponseSchema, response.typeUrl, deltaTypeUrls));
  return join(head, entries, reserve);
}

/** encodeDeltaResponse's SotW twin: DiscoveryResponse, its `resources` the Any of each resource. */
export function encodeSotwResponse(response: DiscoveryResponse, reserve = 0): Uint8Array {
  const head = toBinary(DiscoveryResponseSchema, { ...response, typeUrl: "", resources: [] });
  const entries = response.resources.map((r) =>
    entryOf(DiscoveryResponseSchema, r, () => create(DiscoveryResponseSchema, { resources: [r] })),
  );
  entries.push(typeUrlBytes(DiscoveryResponseSchema, response.typeUrl, sotwTypeUrls));
  return join(head, entries, reserve);
}
