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
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { type Any, AnySchema } from "@bufbuild/protobuf/wkt";
import {
  type DeltaDiscoveryResponse,
  DeltaDiscoveryResponseSchema,
  type DiscoveryResponse,
  DiscoveryResponseSchema,
  type Resource,
  ResourceSchema,
} from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { StoredResource } from "../resources/types.ts";

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

/**
 * The writer every response is encoded with: encoding is synchronous, so one writer serves all,
 * and its buffer (grown to the usual response) is reused. A response past `keptWriterBytes` leaves
 * its grown buffer with a writer that is dropped, and so does a throw (no half-written response
 * stays in it).
 */
let writer = new BinaryWriter();
const keptWriterBytes = 64 * 1024;
/** Runs of 0 to 8 zero bytes (a reserve written per response takes one: no view made per response). */
const zeroRuns = Array.from({ length: 9 }, (_, n) => new Uint8Array(n));

/**
 * Small responses (one per stream per push) are copied into slabs of `slabBytes`, each its own
 * range, as node's Buffer pool does: one ArrayBuffer per slab instead of one per response (finish()
 * slices a new one each time, the costliest step of a small response). A slab lives while a
 * response in it is held (a write not yet flushed), so it is small and only small responses go in.
 */
const slabBytes = 8 * 1024;
const pooledMax = slabBytes / 4;
let slab = new Uint8Array(slabBytes);
let slabAt = 0;

/** The writer's buffer and position (protobuf-es 2's private fields), when they are as expected. */
type WriterState = { buffer?: unknown; pos?: unknown };

/** The bytes written, copied into a slab and the writer reset; undefined (finish() then) when its state is not as expected or they are too many. */
function pooled(w: BinaryWriter): Uint8Array | undefined {
  const state = w as unknown as WriterState;
  const { buffer, pos } = state;
  if (!(buffer instanceof Uint8Array) || typeof pos !== "number" || pos > pooledMax || pos > buffer.length)
    return undefined;
  if (slabAt + pos > slabBytes) {
    slab = new Uint8Array(slabBytes);
    slabAt = 0;
  }
  const out = slab.subarray(slabAt, slabAt + pos);
  out.set(buffer.subarray(0, pos));
  slabAt += pos;
  state.pos = 0; // what finish() does, less the copy (no fork is ever left open here)
  return out;
}

/** What `write` writes with the shared writer, after `reserve` zero bytes (a frame prefix the caller fills). */
function written<M>(reserve: number, message: M, write: (w: BinaryWriter, message: M) => void): Uint8Array {
  const w = writer;
  try {
    if (reserve > 0) w.raw(zeroRuns[reserve] ?? new Uint8Array(reserve));
    write(w, message);
  } catch (e) {
    writer = new BinaryWriter();
    throw e;
  }
  const small = pooled(w);
  if (small) return small;
  const out = w.finish();
  if (out.length > keptWriterBytes) writer = new BinaryWriter();
  return out;
}

/**
 * Whether `bytes` from offset `at` to their end are exactly what `write` writes of `message` with
 * the shared writer (lib/xds/ack-bytes.ts: a request compared with the one expected), compared in
 * the writer's own buffer: nothing is copied out (finish() then, when its state is not as expected).
 */
export function endsWithWritten<M>(
  bytes: Uint8Array,
  at: number,
  message: M,
  write: (w: BinaryWriter, message: M) => void,
): boolean {
  const w = writer;
  try {
    write(w, message);
  } catch (e) {
    writer = new BinaryWriter();
    throw e;
  }
  const state = w as unknown as WriterState;
  const { buffer, pos } = state;
  let ours: Uint8Array;
  let length: number;
  if (buffer instanceof Uint8Array && typeof pos === "number" && pos <= buffer.length) {
    ours = buffer;
    length = pos;
    state.pos = 0; // what finish() does, less the copy (no fork is ever left open here)
  } else {
    ours = w.finish();
    length = ours.length;
  }
  if (bytes.length - at !== length) return false;
  for (let i = 0; i < length; i++) if (bytes[at + i] !== ours[i]) return false;
  return true;
}

/** A singular proto3 string field: written unless empty (as toBinary writes it). */
function singular(w: BinaryWriter, no: number, value: string): void {
  if (value !== "") w.tag(no, WireType.LengthDelimited).string(value);
}

const delta = DeltaDiscoveryResponseSchema.field;
const sotw = DiscoveryResponseSchema.field;

/**
 * The encoding of `response` (parses equal to toBinary's, and as long), after `reserve` zero bytes
 * the caller may fill (a gRPC frame prefix): its envelope fields written with protobuf-es's
 * BinaryWriter at their schema's field numbers, each resource's bytes from the per-message cache.
 */
export function encodeDeltaResponse(response: DeltaDiscoveryResponse, reserve = 0): Uint8Array {
  return written(reserve, response, writeDelta);
}

/**
 * The `resources` and type_url fields of a response, per frozen resources array (a Delta class's
 * shared answer, delta-shared.ts: every stream of the class sends that very array): encoded once,
 * then written whole between each stream's system_version_info and its nonce. Kept with the
 * type URL it was encoded with; weak: it lives as long as the array (about one push).
 */
const deltaBodies = new WeakMap<readonly Resource[], DeltaBody>();

/** A frozen resources array's encoded body, with the type URL it was encoded with. */
interface DeltaBody {
  resources: readonly Resource[] | undefined;
  typeUrl: string;
  bytes: Uint8Array;
}

/** The body deltaBody gave last (kept until the next: at most one push's array outlives its push). */
let lastBody: DeltaBody = {
  resources: undefined,
  typeUrl: "",
  bytes: new Uint8Array(0),
};

/** The resources and type_url fields of `response` as bytes (the writer's encoding of them alone), cached per frozen array. */
function deltaBody(response: DeltaDiscoveryResponse): Uint8Array | undefined {
  const { resources, typeUrl } = response;
  // The last array's body first: a push writes its class's responses one after another.
  if (resources === lastBody.resources) return lastBody.typeUrl === typeUrl ? lastBody.bytes : undefined;
  if (!Object.isFrozen(resources)) return undefined;
  const cached = deltaBodies.get(resources);
  if (cached !== undefined) {
    lastBody = cached;
    return cached.typeUrl === typeUrl ? cached.bytes : undefined;
  }
  // Only frozen messages in a frozen array: nothing can change what was encoded.
  for (const r of resources) if (!Object.isFrozen(r)) return undefined;
  const w = new BinaryWriter();
  writeResources(w, resources, typeUrl);
  const bytes = w.finish();
  lastBody = { resources, typeUrl, bytes };
  deltaBodies.set(resources, lastBody);
  return bytes;
}

function writeResources(w: BinaryWriter, resources: readonly Resource[], typeUrl: string): void {
  for (const r of resources)
    w.raw(
      entryOf(DeltaDiscoveryResponseSchema, r, () =>
        create(DeltaDiscoveryResponseSchema, { resources: [r] }),
      ),
    );
  if (typeUrl !== "") w.raw(typeUrlBytes(DeltaDiscoveryResponseSchema, typeUrl, deltaTypeUrls));
}

function writeDelta(w: BinaryWriter, response: DeltaDiscoveryResponse): void {
  singular(w, delta.systemVersionInfo.number, response.systemVersionInfo);
  const body = deltaBody(response);
  if (body !== undefined) w.raw(body);
  else writeResources(w, response.resources, response.typeUrl);
  singular(w, delta.nonce.number, response.nonce);
  // Indexed: a shared response's list is a frozen empty array, which for-of iterates with an iterator.
  const removed = response.removedResources;
  for (let i = 0; i < removed.length; i++)
    w.tag(delta.removedResources.number, WireType.LengthDelimited).string(removed[i] as string);
  // Fields the sessions never set: toBinary's bytes of them alone.
  const { controlPlane, removedResourceNames } = response;
  if (controlPlane !== undefined || removedResourceNames.length > 0)
    w.raw(
      toBinary(
        DeltaDiscoveryResponseSchema,
        create(DeltaDiscoveryResponseSchema, { controlPlane, removedResourceNames }),
      ),
    );
}

/** encodeDeltaResponse's SotW twin: DiscoveryResponse, its `resources` the Any of each resource. */
export function encodeSotwResponse(response: DiscoveryResponse, reserve = 0): Uint8Array {
  return written(reserve, response, writeSotw);
}

function writeSotw(w: BinaryWriter, response: DiscoveryResponse): void {
  singular(w, sotw.versionInfo.number, response.versionInfo);
  for (const r of response.resources)
    w.raw(entryOf(DiscoveryResponseSchema, r, () => create(DiscoveryResponseSchema, { resources: [r] })));
  if (response.canary) w.tag(sotw.canary.number, WireType.Varint).bool(true);
  if (response.typeUrl !== "") w.raw(typeUrlBytes(DiscoveryResponseSchema, response.typeUrl, sotwTypeUrls));
  singular(w, sotw.nonce.number, response.nonce);
  // A field the sessions never set: toBinary's bytes of it alone.
  const { controlPlane } = response;
  if (controlPlane !== undefined)
    w.raw(toBinary(DiscoveryResponseSchema, create(DiscoveryResponseSchema, { controlPlane })));
}
