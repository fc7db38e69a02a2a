/**
 * Builds the XdsGuard a runtime enforces from its configuration: the key sources of XDS_AUTH=jwt
 * are I/O (a file read on Node, a URL fetched on both runtimes), so they are wired here and
 * lib/auth stays pure. `ready` settles once the static keys are loaded: Node stops start-up when
 * it rejects; the Worker answers each JWT with the reason instead.
 */
import {
  createKeySet,
  createXdsGuard,
  importJwks,
  jwksLimits,
  type KeySet,
  type VerifyKey,
  type XdsAuthConfig,
  type XdsGuard,
} from "../lib/auth/index.ts";
import { logSafe } from "../lib/log-safe.ts";

/** The I/O the key sources need, and the clock and log. */
export interface GuardSetupDeps {
  now: () => number;
  log: (line: string) => void;
  /** Reads XDS_JWKS_FILE (Node); absent on Workers, where that variable is refused. */
  readFile?: (path: string) => Promise<string>;
  /** The fetch used for XDS_JWKS_URL (default: the global fetch). */
  fetch?: typeof fetch;
}

/**
 * The guard, and a promise that rejects with a line naming the variable when a key source is bad;
 * with jwt also its key set, so another check of the same tokens (the CA's audiences) shares the keys.
 */
export function setupGuard(
  config: XdsAuthConfig,
  deps: GuardSetupDeps,
): { guard: XdsGuard; ready: Promise<void>; keys?: KeySet } {
  if (config.mode !== "jwt")
    return { guard: createXdsGuard(config, { now: deps.now }), ready: Promise.resolve() };
  const sources: Promise<VerifyKey[]>[] = [];
  const message = (e: unknown) => (e instanceof Error ? e.message : String(e));
  /** Imports one JWKS source; any failure names its variable. */
  const load = async (name: string, text: () => Promise<string>) => {
    try {
      const result = await importJwks(await text());
      if (!result.ok) throw new Error(result.error);
      for (const s of result.skipped) deps.log(`auth: ${name}: skipped ${s}`);
      return result.keys;
    } catch (e) {
      throw new Error(`${name}: ${message(e)}`);
    }
  };
  const { jwksFile } = config;
  if (jwksFile) {
    const read = deps.readFile;
    sources.push(
      load("XDS_JWKS_FILE", async () => {
        if (!read) throw new Error("not available here (no file system): use XDS_JWKS or XDS_JWKS_URL");
        return read(jwksFile).catch((e: unknown) => {
          throw new Error(`cannot read ${logSafe(jwksFile)}: ${message(e)}`);
        });
      }),
    );
  }
  const { jwks } = config;
  if (jwks) sources.push(load("XDS_JWKS", async () => jwks));
  const staticKeys = sources.length > 0 ? Promise.all(sources).then((all) => all.flat()) : undefined;
  const fetchFn = deps.fetch ?? fetch;
  const keys = createKeySet({
    ...(config.hmacSecret && { hmacSecret: config.hmacSecret }),
    ...(staticKeys && { staticKeys }),
    ...(config.jwksUrl && { url: { href: config.jwksUrl, fetch: (url: string) => fetchJwks(fetchFn, url) } }),
    now: deps.now,
    log: deps.log,
  });
  const ready = staticKeys ? staticKeys.then(() => undefined) : Promise.resolve();
  // A rejection is reported by whoever awaits ready; this keeps it from being "unhandled" meanwhile.
  ready.catch(() => undefined);
  return { guard: createXdsGuard(config, { keys, now: deps.now }), ready, keys };
}

/** GETs a JWKS within 5 s and jwksLimits.maxBytes; throws with the reason. */
export async function fetchJwks(fetchFn: typeof fetch, url: string): Promise<string> {
  const res = await fetchFn(url, {
    headers: { accept: "application/json" },
    signal: AbortSignal.timeout(5000),
  });
  if (!res.ok) {
    await res.body?.cancel();
    throw new Error(`HTTP ${res.status}`);
  }
  const reader = res.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (reader) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > jwksLimits.maxBytes) {
      await reader.cancel();
      throw new Error(`the JWKS is over ${jwksLimits.maxBytes} bytes`);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(bytes);
}
