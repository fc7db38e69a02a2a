/**
 * Istio's proxyless certificate files (OUTPUT_CERTS: cert-chain.pem, key.pem, root-cert.pem), kept
 * as Kubernetes' AtomicWriter keeps a projected volume: each certificate's three files go into a new
 * hidden directory, the `..data` symlink is swapped to it by one rename, and the three names are
 * symlinks through `..data`. A reader (gRPC's file_watcher provider) never sees a half-written file,
 * nor a chain from one certificate with the key of another. The key is readable by the owner only.
 */
import { randomBytes } from "node:crypto";
import { lstatSync, mkdirSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { WorkloadSecret } from "../../lib/agent/cert-machine.ts";

/** The file names Istio's grpc bootstrap points its file_watcher provider at. */
export const certFileNames = { chain: "cert-chain.pem", key: "key.pem", root: "root-cert.pem" } as const;

const data = "..data";

/** Writes `secret` under `dir` (made if missing), replacing the previous certificate in one step. */
export function writeCertFiles(dir: string, secret: WorkloadSecret): void {
  mkdirSync(dir, { recursive: true });
  const version = `..${Date.now()}.${randomBytes(4).toString("hex")}`;
  const target = join(dir, version);
  mkdirSync(target, { mode: 0o755 });
  writeFileSync(join(target, certFileNames.chain), secret.certChainPem, { mode: 0o644 });
  writeFileSync(join(target, certFileNames.key), secret.privateKeyPem, { mode: 0o600 });
  writeFileSync(join(target, certFileNames.root), secret.rootCertPem, { mode: 0o644 });
  const tmp = join(dir, `${data}_tmp`);
  rmSync(tmp, { force: true });
  symlinkSync(version, tmp);
  renameSync(tmp, join(dir, data));
  for (const name of Object.values(certFileNames)) {
    const path = join(dir, name);
    if (isSymlink(path)) continue;
    // A plain file left by someone else is replaced by the link in one rename too.
    const link = `${path}.${randomBytes(4).toString("hex")}.tmp`;
    symlinkSync(join(data, name), link);
    renameSync(link, path);
  }
  for (const entry of readdirSync(dir))
    if (entry.startsWith("..") && entry !== version && entry !== data)
      rmSync(join(dir, entry), { recursive: true, force: true });
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}
