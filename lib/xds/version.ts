/** Content-hash versions: equal bytes give equal versions on every instance and runtime. */
import { type DescMessage, toBinary } from "@bufbuild/protobuf";
import type { Generated, StoredResource, TypeUrl } from "./types.ts";
import { TypeUrl as TypeUrls } from "./types.ts";

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

function hex16(digest: Uint8Array): string {
  let hex = "";
  for (let i = 0; i < 8; i++) hex += (digest[i] as number).toString(16).padStart(2, "0");
  return hex;
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
 * The SotW `version_info` for a set of resources: a hash of the name=version pairs sorted by name
 * (code-unit order), so the same set gives the same string whatever order it was built in.
 * The empty set has a version too.
 */
export function setVersion(entries: readonly { name: string; version: string }[]): Promise<string> {
  const pairs = entries
    .map((e) => [e.name, e.version] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  return shortHash(new TextEncoder().encode(JSON.stringify(pairs)));
}

/** The type URL of a message schema: `type.googleapis.com/<full name>`. */
export function typeUrlOf(schema: DescMessage): string {
  return `type.googleapis.com/${schema.typeName}`;
}

/**
 * Serializes a generated resource (binary protobuf, deterministic for our messages: no maps, no
 * unknown fields) and stamps it with its content hash. `service` is `<namespace>/<hostname>`.
 * Throws when the schema is not one of the served type URLs.
 */
export async function toStored(generated: Generated, service: string): Promise<StoredResource> {
  const typeUrl = typeUrlOf(generated.schema);
  if (!served.has(typeUrl)) throw new TypeError(`xds: ${typeUrl} is not a served type URL`);
  const body = toBinary(generated.schema, generated.message);
  return {
    typeUrl: typeUrl as TypeUrl,
    name: generated.name,
    version: await resourceVersion(body),
    body,
    service,
  };
}

/** The `service` field of a StoredResource for a view: `<namespace>/<hostname>`. */
export function serviceRef(view: { namespace: string; hostname: string }): string {
  return `${view.namespace}/${view.hostname}`;
}
