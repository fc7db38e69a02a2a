/** node:crypto's SHA-256 for lib/resources/version.ts: synchronous, the same digest WebCrypto gives. */
import { hash } from "node:crypto";
import type { Sha256 } from "../../lib/resources/version.ts";

/**
 * SHA-256 of `bytes`, computed on the calling thread (no thread-pool round trip). The one-shot
 * crypto.hash: no Hash object per call, which matters for the many small per-pair digests of
 * set versions.
 */
export const nodeSha256: Sha256 = (bytes) => hash("sha256", bytes, "buffer");
