/**
 * What a push naming MeshConfig regenerates. Istio pushes everything on any mesh change; the flush
 * does the same, but only when the effective settings (the stored MeshConfig under the host's
 * environment overrides) differ from the last push's: a stored change an override masks, or one
 * to a field edgepilot does not implement, regenerates nothing.
 */
import { type PushRequest, parseConfigKey } from "../model/index.ts";
import { type EffectiveMesh, effectiveMesh } from "../registry/mesh/effective-mesh.ts";
import type { PushContextOptions } from "../resources/push-context.ts";
import { keys, type Store } from "../store/index.ts";

const isMeshKey = (c: string) => parseConfigKey(c).kind === "MeshConfig";

/** Whether a push may change the mesh settings: a Full push naming MeshConfig, or everything. */
export function namesMeshConfig(request: PushRequest): boolean {
  if (!request.full) return false;
  return request.configsUpdated === null || request.configsUpdated.some(isMeshKey);
}

/**
 * The request the flush generates for once it knows whether the settings changed: changed ▶ every
 * service (configsUpdated null); unchanged ▶ the MeshConfig keys dropped (nothing left: no service).
 */
export function afterMeshCheck(request: PushRequest, changed: boolean): PushRequest {
  if (request.configsUpdated === null) return request;
  if (changed) return { ...request, configsUpdated: null };
  return { ...request, configsUpdated: request.configsUpdated.filter((c) => !isMeshKey(c)) };
}

/** The settings the last MeshConfig push generated with; never recorded: what no MeshConfig gives. */
export async function appliedMesh(store: Store, options: PushContextOptions): Promise<EffectiveMesh> {
  return (
    (await store.get<EffectiveMesh>(keys.meshApplied()))?.value ?? effectiveMesh(undefined, options.meshEnv)
  );
}
