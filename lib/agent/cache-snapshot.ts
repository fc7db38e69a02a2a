/**
 * The agent's last good configuration as a file (EDGEPILOT_AGENT_CACHE_DIR), encoded and decoded
 * here, purely; functions/node/agent-cache-file.ts does the I/O. The snapshot is what the upstream
 * sent, per type URL: name ─▶ version + encoded resource, byte for byte, whatever the upstream's
 * kind (ADS, Connect Watch or Poll), since it is taken from the agent's cache and not from a stream.
 *
 * Layout: one header line of JSON, then the body, binary: per type its URL and resource count, per
 * resource its name, version and encoded bytes, each a big-endian u32 length then the bytes (names
 * and versions UTF-8). Binary, so saving is sizing plus copying (no base64 or JSON text of the
 * bodies on the event loop). The header names the format, the pod's namespace and the upstream it
 * was cached from, how many resources the body holds and the SHA-256 of the body, so a truncated,
 * corrupt or foreign file is recognised before anything of it is used. Decoding is all or nothing:
 * one bad entry refuses the whole file (never served half).
 */
import { logSafe } from "../log-safe.ts";
import type { Sha256 } from "../resources/version.ts";
import { utf8Length } from "../utf8.ts";
import { servedTypes } from "./requests.ts";

/** One cached resource: the upstream's version and the encoded resource exactly as it sent them. */
export interface CachedResource {
  version: string;
  body: Uint8Array;
}

/** The cache: type URL ─▶ name ─▶ resource. */
export type CacheSnapshot = Map<string, Map<string, CachedResource>>;

/** Whose cache a file is: a file of another namespace or upstream is foreign, and ignored. */
export interface CacheIdentity {
  namespace: string;
  upstream: string;
}

/**
 * The decoded file, or why it is not used (`foreign`: well formed, but not this agent's). A reason
 * is safe to log as it is: what it quotes of the file went through logSafe.
 */
export type DecodedSnapshot =
  | { ok: true; snapshot: CacheSnapshot; savedAt: string; resources: number }
  | { ok: false; foreign: boolean; reason: string };

/** The format's name, in every header. */
export const cacheFormat = "edgepilot-agent-cache";
const formatVersion = 1;
/** Bounds on one entry, well above what the upstream sends (names are Istio's, versions hashes). */
const maxTypeBytes = 256;
const maxNameBytes = 16384;
const maxVersionBytes = 256;

const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

/** Counts the resources of a snapshot. */
export function snapshotSize(snapshot: CacheSnapshot): number {
  let n = 0;
  for (const byName of snapshot.values()) n += byName.size;
  return n;
}

/** The file's bytes: header line, then body; types and names sorted, so equal caches give equal files. */
export function encodeSnapshot(
  snapshot: CacheSnapshot,
  identity: CacheIdentity,
  savedAt: string,
  sha256: Sha256,
): Uint8Array {
  const types = [...snapshot.keys()].sort();
  // One pass to size the body, one to write it: no intermediate text, the bodies copied once.
  let size = 0;
  const sorted = types.map((typeUrl) => {
    const byName = snapshot.get(typeUrl) as Map<string, CachedResource>;
    const names = [...byName.keys()].sort();
    size += 8 + utf8Length(typeUrl);
    for (const n of names)
      size +=
        12 +
        utf8Length(n) +
        utf8Length((byName.get(n) as CachedResource).version) +
        (byName.get(n) as CachedResource).body.length;
    return { typeUrl, byName, names };
  });
  const body = new Uint8Array(size);
  const view = new DataView(body.buffer);
  let at = 0;
  const text = (t: string) => {
    const { written } = utf8.encodeInto(t, body.subarray(at + 4));
    view.setUint32(at, written);
    at += 4 + written;
  };
  for (const { typeUrl, byName, names } of sorted) {
    text(typeUrl);
    view.setUint32(at, names.length);
    at += 4;
    for (const n of names) {
      const r = byName.get(n) as CachedResource;
      text(n);
      text(r.version);
      view.setUint32(at, r.body.length);
      body.set(r.body, at + 4);
      at += 4 + r.body.length;
    }
  }
  const header = utf8.encode(
    `${JSON.stringify({
      format: cacheFormat,
      version: formatVersion,
      namespace: identity.namespace,
      upstream: identity.upstream,
      savedAt,
      resources: snapshotSize(snapshot),
      bodyBytes: body.length,
      sha256: hex(sha256(body)),
    })}\n`,
  );
  const out = new Uint8Array(header.length + body.length);
  out.set(header, 0);
  out.set(body, header.length);
  return out;
}

/** Decodes and checks a whole file against `identity`; see DecodedSnapshot. */
export function decodeSnapshot(bytes: Uint8Array, identity: CacheIdentity, sha256: Sha256): DecodedSnapshot {
  const bad = (reason: string): DecodedSnapshot => ({ ok: false, foreign: false, reason });
  const newline = bytes.indexOf(10);
  if (newline < 0 || newline > 8192) return bad("no header line");
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(strictUtf8.decode(bytes.subarray(0, newline)));
  } catch {
    return bad("the header is not JSON");
  }
  if (typeof header !== "object" || header === null || header.format !== cacheFormat)
    return { ok: false, foreign: true, reason: `not an ${cacheFormat} file` };
  if (header.version !== formatVersion)
    return {
      ok: false,
      foreign: true,
      reason: `format version ${logSafe(header.version, 20)}, not ${formatVersion}`,
    };
  if (header.namespace !== identity.namespace || header.upstream !== identity.upstream)
    return {
      ok: false,
      foreign: true,
      reason: `cached for namespace ${logSafe(header.namespace, 253)} from ${logSafe(header.upstream, 200)}, not this agent's`,
    };
  const body = bytes.subarray(newline + 1);
  if (header.bodyBytes !== body.length)
    return bad(
      `the body has ${body.length} bytes, the header says ${logSafe(header.bodyBytes, 20)} (truncated?)`,
    );
  if (header.sha256 !== hex(sha256(body))) return bad("the body's SHA-256 does not match the header's");
  const read = readBody(body);
  if (typeof read === "string") return bad(read);
  const resources = snapshotSize(read);
  if (resources !== header.resources)
    return bad(`the body holds ${resources} resources, the header says ${logSafe(header.resources, 20)}`);
  return { ok: true, snapshot: read, savedAt: String(header.savedAt ?? ""), resources };
}

/** The body's types and resources, or what is wrong with it (safe to log). */
function readBody(body: Uint8Array): CacheSnapshot | string {
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  let at = 0;
  const u32 = (): number | undefined => {
    if (at + 4 > body.length) return undefined;
    const n = view.getUint32(at);
    at += 4;
    return n;
  };
  const bytes = (max: number): Uint8Array | undefined => {
    const n = u32();
    if (n === undefined || n > max || at + n > body.length) return undefined;
    at += n;
    return body.subarray(at - n, at);
  };
  const text = (max: number): string | undefined => {
    const b = bytes(max);
    if (b === undefined) return undefined;
    try {
      return strictUtf8.decode(b);
    } catch {
      return undefined;
    }
  };
  const snapshot: CacheSnapshot = new Map();
  for (let i = 0; at < body.length; i++) {
    const typeUrl = text(maxTypeBytes);
    const count = u32();
    if (typeUrl === undefined || count === undefined) return `type entry ${i} is cut or malformed`;
    if (!servedTypes.has(typeUrl))
      return `type entry ${i}: ${logSafe(typeUrl, 200)} is not a type the agent caches`;
    if (snapshot.has(typeUrl)) return `type ${typeUrl} appears twice`;
    const byName = new Map<string, CachedResource>();
    for (let j = 0; j < count; j++) {
      const where = `${typeUrl} resource ${j}`;
      const name = text(maxNameBytes);
      if (name === undefined || name === "") return `${where}: no name of 1 to ${maxNameBytes} UTF-8 bytes`;
      const version = text(maxVersionBytes);
      if (version === undefined) return `${where}: no version of at most ${maxVersionBytes} UTF-8 bytes`;
      const resource = bytes(body.length);
      if (resource === undefined) return `${where}: the resource is cut`;
      if (byName.has(name)) return `${where}: ${logSafe(name, 200)} appears twice`;
      // A plain Uint8Array of its own (the file may be a Buffer, and one buffer for all would stay alive).
      byName.set(name, { version, body: new Uint8Array(resource) });
    }
    snapshot.set(typeUrl, byName);
  }
  return snapshot;
}
