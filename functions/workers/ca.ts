/**
 * The certificate authority of the Worker: Istio's plug-in CA from four secrets (CA_CERT_PEM,
 * CA_KEY_PEM, CERT_CHAIN_PEM, ROOT_CERT_PEM: the files of ROOT_CA_DIR), else the self-signed root
 * kept in the MeshStore's storage, so every isolate signs under one root (functions/ca-variables.ts,
 * shared with Lambda). Built on the first CreateCertificate of an isolate (the setup reads the
 * object); a failed build is retried on the next call rather than kept.
 */
import type { KeySet } from "../../lib/auth/key-set.ts";
import type { Config } from "../../lib/config.ts";
import type { Store } from "../../lib/store/store.ts";
import { type CaService, lazyCa } from "../ca.ts";
import { setupCaFromVariables } from "../ca-variables.ts";
import type { Env } from "./index.ts";

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
  return lazyCa(() => setupWorkerCa(env, config, deps));
}

/**
 * The CA to serve. A plug-in CA set only in part, or one that does not verify, is served as
 * unavailable with the reason naming the secret (the Worker has no start-up to stop); a failure
 * reading the stored root rejects, so the next call tries again.
 */
export function setupWorkerCa(env: Env, config: Config, deps: WorkerCaDeps): Promise<CaService> {
  return setupCaFromVariables(env, config, deps);
}
