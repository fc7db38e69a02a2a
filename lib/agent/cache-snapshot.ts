/**
 * The agent's last good configuration as a file (EDGEPILOT_AGENT_CACHE_DIR), encoded and decoded
 * here, purely; functions/node/agent-cache-file.ts does the I/O. The snapshot is what the upstream
 * sent, per type URL: name ─▶ version + encoded resource, byte for byte, whatever the upstream's
 * kind (ADS, Connect Watch or Poll), since it is taken from the agent's cache and not from a stream.
 *
 * Layout: one header line of JSON, then the body (JSON). The header names the format, the pod's
 * namespace and the upstream it was cached from, how many resources the body holds and the SHA-256
 * of the body, so a truncated, corrupt or foreign file is recognised before anything of it is used.
 * Decoding is all or nothing: one bad entry refuses the whole file (never served half).
 */
import { logSafe } from "../log-safe.ts";
import { base64ToBytes, bytesToBase64 } from "../store/codec.ts";
import type { Sha256 } from "../xds/version.ts";
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
const maxNameChars = 4096;
const maxVersionChars = 256;

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
  const body = utf8.encode(
    JSON.stringify(
      types.map((typeUrl) => {
        const byName = snapshot.get(typeUrl) as Map<string, CachedResource>;
        const names = [...byName.keys()].sort();
        return [
          typeUrl,
          names.map((n) => {
            const r = byName.get(n) as CachedResource;
            return [n, r.version, bytesToBase64(r.body)];
          }),
        ];
      }),
    ),
  );
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
  let parsed: unknown;
  try {
    parsed = JSON.parse(strictUtf8.decode(body));
  } catch {
    return bad("the body is not JSON");
  }
  const snapshot: CacheSnapshot = new Map();
  if (!Array.isArray(parsed)) return bad("the body is not a list of types");
  for (const [i, entry] of parsed.entries()) {
    if (!Array.isArray(entry) || entry.length !== 2 || !Array.isArray(entry[1]))
      return bad(`type entry ${i} is not [typeUrl, resources]`);
    const [typeUrl, list] = entry as [unknown, unknown[]];
    if (typeof typeUrl !== "string" || !servedTypes.has(typeUrl))
      return bad(`type entry ${i}: ${logSafe(typeUrl, 200)} is not a type the agent caches`);
    if (snapshot.has(typeUrl)) return bad(`type ${typeUrl} appears twice`);
    const byName = new Map<string, CachedResource>();
    for (const [j, r] of list.entries()) {
      const where = `${typeUrl} resource ${j}`;
      if (!Array.isArray(r) || r.length !== 3) return bad(`${where}: not [name, version, base64]`);
      const [name, version, b64] = r as unknown[];
      if (typeof name !== "string" || name === "" || name.length > maxNameChars)
        return bad(`${where}: the name is not a non-empty string of at most ${maxNameChars} characters`);
      if (typeof version !== "string" || version.length > maxVersionChars)
        return bad(`${where}: the version is not a string of at most ${maxVersionChars} characters`);
      if (typeof b64 !== "string") return bad(`${where}: the resource is not base64`);
      if (byName.has(name)) return bad(`${where}: ${logSafe(name, 200)} appears twice`);
      let body: Uint8Array;
      try {
        body = base64ToBytes(b64);
      } catch {
        return bad(`${where}: the resource is not base64`);
      }
      byName.set(name, { version, body });
    }
    snapshot.set(typeUrl, byName);
  }
  const resources = snapshotSize(snapshot);
  if (resources !== header.resources)
    return bad(`the body holds ${resources} resources, the header says ${logSafe(header.resources, 20)}`);
  return { ok: true, snapshot, savedAt: String(header.savedAt ?? ""), resources };
}
