/** node:crypto's SHA-256 for lib/xds/version.ts: synchronous, the same digest WebCrypto gives. */
import { createHash } from "node:crypto";
import type { Sha256 } from "../../lib/xds/version.ts";

/** SHA-256 of `bytes`, computed on the calling thread (no thread-pool round trip). */
export const nodeSha256: Sha256 = (bytes) => createHash("sha256").update(bytes).digest();
