/**
 * The response byte budget (EDGEPILOT_MAX_RESPONSE_BYTES): how many bytes an encoded xDS response
 * may take, and how an answer is cut into pieces under it. Stored resources carry their encoded
 * bytes, so the size of a response is known exactly before it is built: the wire size of each
 * resource entry below is the protobuf length of the field that carries it.
 */

import type { StoredResource } from "../resources/types.ts";
import { utf8Length } from "../utf8.ts";

/**
 * gRPC's default receive limit is 4 MiB per message (grpc-js, grpc-go, grpc-java); the budget
 * leaves 64 KiB under it so that a piece plus its envelope never reaches it.
 */
export const defaultMaxResponseBytes = 4 * 1024 * 1024 - 64 * 1024;

/**
 * What a response takes besides its resources and removed names: type URL, nonce, version and
 * their tags. Type URLs are < 100 bytes, nonces 36, versions 16: 1 KiB is a wide upper bound.
 */
export const envelopeBytes = 1024;

/** An answer that cannot be cut (SotW CDS/LDS: state of the world) and is over the budget. */
export class ResponseTooLargeError extends Error {
  constructor(
    readonly typeUrl: string,
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(
      `the ${shortType(typeUrl)} answer is ${bytes} bytes, over EDGEPILOT_MAX_RESPONSE_BYTES=${limit}; ` +
        "a state-of-the-world response cannot be split (a partial one would remove what it lacks): " +
        "use Delta xDS, subscribe to fewer resources, or raise the limit (and the client's receive limit)",
    );
    this.name = "ResponseTooLargeError";
  }
}

/** The last segment of a type URL (`Cluster`, `ClusterLoadAssignment`, ...), for messages and logs. */
export function shortType(typeUrl: string): string {
  return typeUrl.slice(typeUrl.lastIndexOf(".") + 1);
}

/** Bytes of a base-128 varint holding `n`. */
function varintBytes(n: number): number {
  let bytes = 1;
  for (let v = n; v >= 128; v = Math.floor(v / 128)) bytes++;
  return bytes;
}

/** Bytes of a length-delimited field (one-byte tag) whose payload is `payload` bytes. */
function fieldBytes(payload: number): number {
  return 1 + varintBytes(payload) + payload;
}

/** A singular proto3 field: absent when empty (zero bytes), else a length-delimited field. */
function singularBytes(payload: number): number {
  return payload === 0 ? 0 : fieldBytes(payload);
}

function stringBytes(s: string): number {
  return singularBytes(utf8Length(s));
}

/** Bytes of google.protobuf.Any { type_url, value } holding `r`, as a field of its parent. */
function anyFieldBytes(r: StoredResource): number {
  return fieldBytes(stringBytes(r.typeUrl) + singularBytes(r.body.length));
}

/** Bytes `r` adds to a SotW DiscoveryResponse (one entry of `resources`, an Any). */
export function sotwResourceBytes(r: StoredResource): number {
  return anyFieldBytes(r);
}

/** deltaResourceBytes per resource object: a push's resources are sized once, not once per stream. */
const deltaSizes = new WeakMap<StoredResource, number>();

/** Bytes `r` adds to a DeltaDiscoveryResponse (one Resource { name, version, resource }). */
export function deltaResourceBytes(r: StoredResource): number {
  let n = deltaSizes.get(r);
  if (n === undefined) {
    n = fieldBytes(stringBytes(r.name) + stringBytes(r.version) + anyFieldBytes(r));
    deltaSizes.set(r, n);
  }
  return n;
}

/** Bytes one name adds to removed_resources (a repeated field: even "" is encoded). */
export function removedNameBytes(name: string): number {
  return fieldBytes(utf8Length(name));
}

/**
 * Whether `resources` and `removed` fit one Delta response under `budget` (then planDeltaPieces
 * plans exactly one piece of them): the usual answer, which a caller may then send as it is.
 */
export function fitsOneDeltaResponse(
  resources: readonly StoredResource[],
  removed: readonly string[],
  budget: number,
): boolean {
  let used = 0;
  for (const r of resources) used += deltaResourceBytes(r);
  for (const name of removed) used += removedNameBytes(name);
  return used <= budget - envelopeBytes;
}

/**
 * Cuts `items` in order into pieces whose sizes plus the envelope stay within `budget`. An item
 * that alone is over the budget goes in a piece of its own (it cannot be cut). No items, no pieces.
 */
export function splitByBudget<T>(items: readonly T[], size: (item: T) => number, budget: number): T[][] {
  const room = Math.max(1, budget - envelopeBytes);
  const pieces: T[][] = [];
  let current: T[] = [];
  let used = 0;
  for (const item of items) {
    const n = size(item);
    if (current.length > 0 && used + n > room) {
      pieces.push(current);
      current = [];
      used = 0;
    }
    current.push(item);
    used += n;
  }
  if (current.length > 0) pieces.push(current);
  return pieces;
}

/** One DeltaDiscoveryResponse's share of an answer. */
export interface DeltaPiece {
  resources: StoredResource[];
  removed: string[];
}

/**
 * The pieces of one Delta answer: resources in order, cut under the budget; the removals ride
 * with the last piece when they fit, else go alone after it (cut too), so every addition precedes
 * every removal. An answer with nothing at all is one empty piece (a wildcard's first answer).
 */
export function planDeltaPieces(
  resources: readonly StoredResource[],
  removed: readonly string[],
  budget: number,
): DeltaPiece[] {
  // The usual answer (a push's few changes) fits one response: no cutting, one piece.
  if (fitsOneDeltaResponse(resources, removed, budget))
    return [{ resources: [...resources], removed: [...removed] }];
  const pieces: DeltaPiece[] = splitByBudget(resources, deltaResourceBytes, budget).map((rs) => ({
    resources: rs,
    removed: [],
  }));
  if (removed.length === 0) return pieces.length > 0 ? pieces : [{ resources: [], removed: [] }];
  const last = pieces.at(-1);
  const removedSize = removed.reduce((n, name) => n + removedNameBytes(name), 0);
  const lastSize = last ? last.resources.reduce((n, r) => n + deltaResourceBytes(r), 0) : 0;
  if (last && lastSize + removedSize <= budget - envelopeBytes) {
    last.removed = [...removed];
    return pieces;
  }
  for (const names of splitByBudget(removed, removedNameBytes, budget))
    pieces.push({ resources: [], removed: names });
  return pieces;
}

/** The resources over the budget on their own: sent alone, and worth a log line naming each. */
export function oversized(
  resources: readonly StoredResource[],
  size: (r: StoredResource) => number,
  budget: number,
): readonly StoredResource[] {
  // A loop first: an answer (one per stream per push) with none over the budget makes no array.
  let any = false;
  for (const r of resources) if (size(r) + envelopeBytes > budget) any = true;
  return any ? resources.filter((r) => size(r) + envelopeBytes > budget) : noResources;
}

const noResources: readonly StoredResource[] = [];
