/** API discovery's I/O: which "crd" kinds this cluster serves now, and at which version (lib/relay/discovery.ts decides). */
import type { KubeConfig } from "@kubernetes/client-node";
import { chooseVersions, groupVersionKey, groupVersionsToFetch } from "../../../lib/relay/discovery.ts";
import { crdKinds, type KindSpec } from "../../../lib/relay/kinds.ts";
import { KubeHttpError, kubeGet } from "./kube-http.ts";

/**
 * The "crd" kinds served now, each at its newest served version: GET /apis, then GET
 * /apis/<group>/<version> for each served version a kind may be at. Discovery needs no RBAC (the
 * built-in system:discovery role). Throws when a GET fails (but 404 on a group version, which then
 * serves nothing) or a document is malformed; the caller keeps what it watches and retries.
 */
export async function discoverCrdKinds(kc: KubeConfig, signal: AbortSignal): Promise<KindSpec[]> {
  const gvs = groupVersionsToFetch(await kubeGet(kc, "/apis", {}, signal), crdKinds);
  if (!gvs.ok) throw new Error(gvs.error);
  const lists = new Map<string, unknown>();
  for (const gv of gvs.value) {
    const key = groupVersionKey(gv);
    try {
      lists.set(key, await kubeGet(kc, `/apis/${key}`, {}, signal));
    } catch (err) {
      if (!(err instanceof KubeHttpError && err.status === 404)) throw err;
      lists.set(key, null);
    }
  }
  const served = chooseVersions(crdKinds, lists);
  if (!served.ok) throw new Error(served.error);
  return served.value;
}
