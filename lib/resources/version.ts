/** Content-hash versions: equal bytes give equal versions on every instance and runtime. */
import { type DescMessage, toBinary } from "@bufbuild/protobuf";
import type { Generated, StoredResource } from "./types.ts";
import type { TypeUrl } from "./xds-types.ts";
import { TypeUrl as TypeUrls } from "./xds-types.ts";

const served = new Set<string>(Object.values(TypeUrls));

/**
 * A synchronous SHA-256 (the whole 32-byte digest), where the runtime has one: the Node runtime
 * injects node:crypto's; lib/ imports no runtime module, and workerd keeps WebCrypto.
 */
export type Sha256 = (bytes: Uint8Array) => Uint8Array;

let syncSha256: Sha256 | undefined;

/**
 * Makes every version hash use `sha256` synchronously instead of one awaited WebCrypto digest per
 * resource (each a thread-pool round trip on Node). The digest is the same SHA-256, so versions are
 * the same strings on every runtime; `undefined` goes back to WebCrypto.
 */
export function useSyncSha256(sha256: Sha256 | undefined): void {
  syncSha256 = sha256;
}

/**
 * True when set versions are hashed synchronously (useSyncSha256): a VersionMap whose versionNow()
 * answers keeps answering after any set and delete, so a caller may change it and read its version
 * without a promise.
 */
export function versionsHashedNow(): boolean {
  return syncSha256 !== undefined;
}

/**
 * Lower-case hex of the first 8 bytes of `digest`, as ONE flat string (hex64 of them big-endian):
 * a flush makes one per resource, and a digit-pair concatenation made seven strings on the way.
 */
function hex16(d: Uint8Array): string {
  const at = (i: number) => d[i] as number;
  return hex64(
    (at(0) << 24) | (at(1) << 16) | (at(2) << 8) | at(3),
    (at(4) << 24) | (at(5) << 16) | (at(6) << 8) | at(7),
  );
}

/** Lower-case hex of the first 8 bytes of SHA-256(bytes): the injected hash, else WebCrypto. */
async function shortHash(bytes: Uint8Array): Promise<string> {
  if (syncSha256) return hex16(syncSha256(bytes));
  // Copy into a fresh ArrayBuffer: digest() wants a BufferSource, and a view may sit on a shared buffer.
  const digest = await crypto.subtle.digest("SHA-256", bytes.slice().buffer as ArrayBuffer);
  return hex16(new Uint8Array(digest, 0, 8));
}

/** The version of one serialized resource: 16 hex digits of SHA-256(body). */
export function resourceVersion(body: Uint8Array): Promise<string> {
  return shortHash(body);
}

/**
 * The SotW `version_info` (and Delta `system_version_info`) of a name─▶version set: the sum mod
 * 2^64 of a per-pair digest (the first 8 bytes of SHA-256 of the JSON `[name, version]`, big-endian)
 * as 16 lower-case hex digits. A sum is order-independent and, unlike XOR, keeps a pair that comes
 * back after leaving, so the version can be updated in O(changed) (createSetDigest) and still be a
 * pure function of the set: the same set gives the same string on every instance and runtime.
 * The empty set has a version too. Each name counts once (the last version given wins).
 */
export function setVersion(entries: readonly { name: string; version: string }[]): Promise<string> {
  const digest = createSetDigest();
  const seen = new Map<string, string>();
  for (const e of entries) seen.set(e.name, e.version);
  for (const [name, version] of seen) digest.add(name, version);
  return digest.version();
}

/** A set version kept up to date as pairs come and go: setVersion of the current set, in O(changed). */
export interface SetDigest {
  /** Counts `name` at `version` in (the caller removes the name's previous version first). */
  add(name: string, version: string): void;
  /** Takes `name` at `version` out (it must have been added). */
  remove(name: string, version: string): void;
  /** setVersion of the set as it is now (later adds and removes do not change the answer). */
  version(): Promise<string>;
  /** version() now, when nothing waits to be hashed (always, with versionsHashedNow()); else undefined. */
  versionNow(): string | undefined;
}

const utf8 = new TextEncoder();
const two32 = 2 ** 32;

/** A 64-bit pair digest as two unsigned 32-bit halves (Numbers: no BigInt allocation per step). */
interface Pair64 {
  hi: number;
  lo: number;
}

/**
 * Pair digests recently computed, shared by every stream: the streams of one mesh hold the same
 * pairs, so a pair is hashed about once per push, not once per stream. Keyed by name, then
 * version: both strings are the change feed's own (shared by every stream), so a lookup hashes
 * no new string. Two generations of at most `pairCacheGeneration` pairs each (bounded memory; a
 * pair used again moves to the new one).
 */
const pairCacheGeneration = 32_768;
type PairCache = Map<string, Map<string, Pair64>>;
let pairsNew: PairCache = new Map();
let pairsOld: PairCache = new Map();
let pairsNewCount = 0;

function cachedPair(name: string, version: string): Pair64 | undefined {
  const hit = pairsNew.get(name)?.get(version);
  if (hit !== undefined) return hit;
  const old = pairsOld.get(name)?.get(version);
  if (old !== undefined) rememberPair(name, version, old);
  return old;
}

function rememberPair(name: string, version: string, digest: Pair64): void {
  if (pairsNewCount >= pairCacheGeneration) {
    pairsOld = pairsNew;
    pairsNew = new Map();
    pairsNewCount = 0;
  }
  let versions = pairsNew.get(name);
  if (versions === undefined) {
    versions = new Map();
    pairsNew.set(name, versions);
  }
  if (!versions.has(version)) pairsNewCount++;
  versions.set(version, digest);
}

function first64(digest: Uint8Array): Pair64 {
  const view = new DataView(digest.buffer, digest.byteOffset, 8);
  return { hi: view.getUint32(0), lo: view.getUint32(4) };
}

/** What a pair's digest hashes: the JSON `[name, version]`. */
const pairJson = (name: string, version: string) => JSON.stringify([name, version]);

/** The pair digest now, when cached or a synchronous SHA-256 is injected; else undefined. */
function pairNow(name: string, version: string): Pair64 | undefined {
  const hit = cachedPair(name, version);
  if (hit !== undefined || !syncSha256) return hit;
  const digest = first64(syncSha256(utf8.encode(pairJson(name, version))));
  rememberPair(name, version, digest);
  return digest;
}

async function pairLater(name: string, version: string): Promise<Pair64> {
  const now = pairNow(name, version);
  if (now !== undefined) return now;
  const bytes = utf8.encode(pairJson(name, version));
  const digest = first64(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
  rememberPair(name, version, digest);
  return digest;
}

/** A running sum mod 2^64 of pair digests, in two 32-bit halves. */
interface Sum64 {
  hi: number;
  lo: number;
}

function addTo(sum: Sum64, d: Pair64, sign: 1 | -1): void {
  let lo = sum.lo + sign * d.lo;
  let carry = 0;
  if (lo >= two32) {
    lo -= two32;
    carry = 1;
  } else if (lo < 0) {
    lo += two32;
    carry = -1;
  }
  sum.lo = lo;
  sum.hi = (((sum.hi + sign * d.hi + carry) % two32) + two32) % two32;
}

/** The char code of a lower-case hex digit (0-15). */
const digit = (n: number) => (n < 10 ? 48 + n : 87 + n);

/**
 * Sixteen lower-case hex digits of the 64-bit `hi`:`lo`, made as ONE flat string (no concatenations,
 * no radix conversion): every stream makes one per push and one per ACK.
 */
const hex64 = (hi: number, lo: number) =>
  String.fromCharCode(
    digit(hi >>> 28),
    digit((hi >>> 24) & 15),
    digit((hi >>> 20) & 15),
    digit((hi >>> 16) & 15),
    digit((hi >>> 12) & 15),
    digit((hi >>> 8) & 15),
    digit((hi >>> 4) & 15),
    digit(hi & 15),
    digit(lo >>> 28),
    digit((lo >>> 24) & 15),
    digit((lo >>> 20) & 15),
    digit((lo >>> 16) & 15),
    digit((lo >>> 12) & 15),
    digit((lo >>> 8) & 15),
    digit((lo >>> 4) & 15),
    digit(lo & 15),
  );

/**
 * An empty SetDigest. With a synchronous SHA-256 (useSyncSha256) every add and remove is folded in
 * at once; with WebCrypto they wait, in order, for the next version() to hash them together.
 */
export function createSetDigest(): SetDigest {
  return new Digest();
}

/** A pair waiting to be hashed and folded in. */
interface Pending {
  name: string;
  version: string;
  sign: 1 | -1;
}

/**
 * createSetDigest's digest: its sum and state as fields of one object, no closures. Every stream's
 * view and holdings keep one, read at each push and ACK: one object to reach, not a closure, its
 * context, a sum object and an empty array of pending pairs.
 */
class Digest implements SetDigest, Sum64 {
  hi = 0;
  lo = 0;
  /** Pairs waiting for version() to hash them (undefined: none). */
  #pending: Pending[] | undefined;
  #folding: Promise<void> | undefined;
  /** The hex of the sum, kept until the sum changes: a push asks every stream's version once or more. */
  #hexed: string | undefined;

  add(name: string, version: string): void {
    this.#apply(name, version, 1);
  }

  remove(name: string, version: string): void {
    this.#apply(name, version, -1);
  }

  versionNow(): string | undefined {
    return this.#pending === undefined && this.#folding === undefined ? this.#hex() : undefined;
  }

  version(): Promise<string> {
    const batch = this.#pending;
    if (batch === undefined && this.#folding === undefined) return Promise.resolve(this.#hex());
    this.#pending = undefined;
    const fold = (this.#folding ?? Promise.resolve()).then(async () => {
      if (batch === undefined) return;
      const digests = await Promise.all(batch.map((p) => pairLater(p.name, p.version)));
      batch.forEach((p, i) => {
        addTo(this, digests[i] as Pair64, p.sign);
      });
      this.#hexed = undefined;
    });
    const mine = fold.then(() => this.#hex());
    this.#folding = fold;
    const settled = () => {
      if (this.#folding === fold) this.#folding = undefined;
    };
    fold.then(settled, settled);
    return mine;
  }

  #apply(name: string, version: string, sign: 1 | -1): void {
    const digest =
      this.#pending === undefined && this.#folding === undefined ? pairNow(name, version) : undefined;
    if (digest === undefined) {
      this.#pending ??= [];
      this.#pending.push({ name, version, sign });
    } else {
      addTo(this, digest, sign);
      this.#hexed = undefined;
    }
  }

  #hex(): string {
    this.#hexed ??= hex64(this.hi, this.lo);
    return this.#hexed;
  }
}

/** A name─▶version map that knows its set version (setVersion of its entries) in O(changed). */
export interface VersionMap extends ReadonlyMap<string, string> {
  set(name: string, version: string): this;
  delete(name: string): boolean;
  /** setVersion of the entries as they are now. */
  version(): Promise<string>;
  /** version() without a promise when it can be had now (see SetDigest.versionNow), else undefined. */
  versionNow(): string | undefined;
}

class DigestedMap extends Map<string, string> implements VersionMap {
  readonly #digest = createSetDigest();
  override set(name: string, version: string): this {
    const was = super.get(name);
    if (was === version) return this;
    if (was !== undefined) this.#digest.remove(name, was);
    this.#digest.add(name, version);
    return super.set(name, version);
  }
  override delete(name: string): boolean {
    const was = super.get(name);
    if (was === undefined) return false;
    this.#digest.remove(name, was);
    return super.delete(name);
  }
  override clear(): void {
    for (const name of [...super.keys()]) this.delete(name);
  }
  version(): Promise<string> {
    return this.#digest.version();
  }
  versionNow(): string | undefined {
    return this.#digest.versionNow();
  }
}

/** A VersionMap holding `entries` (a later entry for the same name wins). */
export function createVersionMap(entries: Iterable<readonly [string, string]> = []): VersionMap {
  const map = new DigestedMap();
  for (const [name, version] of entries) map.set(name, version);
  return map;
}

/** The type URL of a message schema: `type.googleapis.com/<full name>`. */
export function typeUrlOf(schema: DescMessage): string {
  return `type.googleapis.com/${schema.typeName}`;
}

/** Served type URLs by schema, so a flush does not build the string once per resource. */
const servedBySchema = new WeakMap<DescMessage, TypeUrl>();

function servedTypeUrl(schema: DescMessage): TypeUrl {
  let typeUrl = servedBySchema.get(schema);
  if (typeUrl === undefined) {
    const url = typeUrlOf(schema);
    if (!served.has(url)) throw new TypeError(`xds: ${url} is not a served type URL`);
    typeUrl = url as TypeUrl;
    servedBySchema.set(schema, typeUrl);
  }
  return typeUrl;
}

/**
 * Serializes a generated resource (binary protobuf, deterministic for our messages: no maps, no
 * unknown fields) once and stamps it with the content hash of those very bytes. `service` is
 * `<namespace>/<hostname>`. With a synchronous SHA-256 (useSyncSha256) the resource is returned
 * at once, without a promise per resource (a flush makes 40,000 of them for 10k services); with
 * WebCrypto it comes as a promise. Throws when the schema is not one of the served type URLs.
 */
export function toStored(generated: Generated, service: string): StoredResource | Promise<StoredResource> {
  const typeUrl = servedTypeUrl(generated.schema);
  const body = toBinary(generated.schema, generated.message);
  const { name } = generated;
  if (syncSha256) return { typeUrl, name, version: hex16(syncSha256(body)), body, service };
  return resourceVersion(body).then((version) => ({ typeUrl, name, version, body, service }));
}

/** The `service` field of a StoredResource for a view: `<namespace>/<hostname>`. */
export function serviceRef(view: { namespace: string; hostname: string }): string {
  return `${view.namespace}/${view.hostname}`;
}
