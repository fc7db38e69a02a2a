/**
 * The certificate authority of the Worker: Istio's plug-in CA from four secrets (CA_CERT_PEM,
 * CA_KEY_PEM, CERT_CHAIN_PEM, ROOT_CERT_PEM: the files of ROOT_CA_DIR), else the self-signed root
 * kept in the MeshStore's storage, so every isolate signs under one root. Built on the first
 * CreateCertificate of an isolate (the setup reads the object); a failed build is retried on the
 * next call rather than kept.
 */
import type { KeySet } from "../../lib/auth/key-set.ts";
import { loadPluginCa, type PluginCaFiles } from "../../lib/ca/bundle.ts";
import type { Config } from "../../lib/config.ts";
import { logWarn } from "../../lib/log/line-log.ts";
import type { Store } from "../../lib/store/store.ts";
import { type CaService, setupCa } from "../ca.ts";
import type { Env } from "./index.ts";

/** The Worker variables holding each plug-in file, in the layout's order. */
export const pluginCaVars: Readonly<Record<keyof PluginCaFiles, keyof Env>> = {
  "ca-cert.pem": "CA_CERT_PEM",
  "ca-key.pem": "CA_KEY_PEM",
  "cert-chain.pem": "CERT_CHAIN_PEM",
  "root-cert.pem": "ROOT_CERT_PEM",
};

/** What the Worker's CA is built over. */
export interface WorkerCaDeps {
  /** The MeshStore's store over RPC: its storage is the one every isolate reads. */
  store: Store;
  keys: KeySet | undefined;
  now: () => number;
  log: (line: string) => void;
}

/** A getter of the CA (or why none is), built once per isolate; a rejected build is not kept. */
export function lazyWorkerCa(env: Env, config: Config, deps: WorkerCaDeps): () => Promise<CaService> {
  let pending: Promise<CaService> | undefined;
  return () => {
    if (!pending) {
      pending = setupWorkerCa(env, config, deps);
      pending.catch(() => {
        pending = undefined;
      });
    }
    return pending;
  };
}

/**
 * The CA to serve. A plug-in CA set only in part, or one that does not verify, is served as
 * unavailable with the reason naming the secret (the Worker has no start-up to stop); a failure
 * reading the stored root rejects, so the next call tries again.
 */
export async function setupWorkerCa(env: Env, config: Config, deps: WorkerCaDeps): Promise<CaService> {
  const names = Object.entries(pluginCaVars) as [keyof PluginCaFiles, keyof Env][];
  const secretOf = (v: keyof Env) => {
    const value = env[v];
    return typeof value === "string" && value !== "" ? value : undefined;
  };
  const all = names.map(([, v]) => v).join(", ");
  if (!names.some(([, v]) => secretOf(v))) return setupCa(config, deps, {});
  const load = async () => {
    const missing = names.filter(([, v]) => !secretOf(v)).map(([, v]) => v);
    if (missing.length > 0)
      throw new Error(`${missing.join(", ")} not set: a plug-in CA needs all of ${all}`);
    const files = {} as PluginCaFiles;
    for (const [file, v] of names) files[file] = secretOf(v) ?? "";
    const loaded = await loadPluginCa(files, deps.now());
    if (loaded.ok) return loaded.bundle;
    // lib/ca names the file; here each file is a secret.
    const [file, v] = names.find(([f]) => loaded.error.startsWith(`${f}:`)) ?? [];
    throw new Error(file && v ? `${v}${loaded.error.slice(file.length)}` : loaded.error);
  };
  return setupCa(config, deps, { plugin: { where: all, load } }).catch((e: unknown): CaService => {
    const reason = `the plug-in CA: ${e instanceof Error ? e.message : e}`;
    logWarn(deps.log, `ca: IstioCertificateService is not served: ${reason}`);
    return { unavailable: `the certificate authority is not configured: ${reason}` };
  });
}
