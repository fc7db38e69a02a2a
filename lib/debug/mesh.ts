/**
 * /debug/mesh (istiod's debug/mesh): the stored mesh records, as ingest wrote them from the `istio`
 * ConfigMap or the mesh files. Each is the implemented fields set there (absent: the environment's
 * value or Istio's default applies), the fields accepted but not implemented, and its source; null
 * when nothing set it. What generation uses after environment overrides is the effective config,
 * not shown here.
 */
import type { StoredMeshConfig } from "../registry/mesh/mesh-config.ts";
import type { StoredMeshNetworks } from "../registry/mesh/mesh-networks.ts";
import { keys } from "../store/keys.ts";
import type { Store } from "../store/store.ts";

/** The /debug/mesh body: both records, null when absent. */
export interface MeshDebug {
  meshConfig: StoredMeshConfig | null;
  meshNetworks: StoredMeshNetworks | null;
}

/** Reads both records: two bounded reads, whatever the mesh's size. */
export async function readMeshDebug(store: Store): Promise<MeshDebug> {
  const [config, networks] = await Promise.all([
    store.get<StoredMeshConfig>(keys.meshConfig()),
    store.get<StoredMeshNetworks>(keys.meshNetworks()),
  ]);
  return { meshConfig: config?.value ?? null, meshNetworks: networks?.value ?? null };
}
