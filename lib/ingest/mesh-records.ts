/**
 * Writes the stored mesh records (StoredMeshConfig, StoredMeshNetworks) for the mesh ConfigMap's
 * handler and for MESH_CONFIG_FILE / MESH_NETWORKS_FILE alike, so both push the same way: a changed
 * model is a Full push whose ConfigsUpdated names `MeshConfig` (resp. `MeshNetworks`) `istio` in
 * ISTIO_NAMESPACE, with istiod's reason (`global` for mesh config, `networks` for MeshNetworks); a
 * record whose model is unchanged (only its source or unsupported list moved) is stored and pushes nothing.
 */
import { configKeyString, type PushRequest, pushRequest } from "../model/index.ts";
import { DEFAULT_ISTIO_NAMESPACE, MESH_CONFIGMAP_NAME } from "../registry/mesh/istio-configmap.ts";
import type { StoredMeshConfig } from "../registry/mesh/mesh-config.ts";
import type { StoredMeshNetworks } from "../registry/mesh/mesh-networks.ts";
import { sameJson } from "../same-json.ts";
import { keys } from "../store/index.ts";
import type { IngestContext } from "./context.ts";

/** The two mesh records, by the ConfigKey kind their change names. */
export interface MeshRecords {
  MeshConfig: StoredMeshConfig;
  MeshNetworks: StoredMeshNetworks;
}

export type MeshRecordKind = keyof MeshRecords;

const storeKey = (kind: MeshRecordKind) => (kind === "MeshConfig" ? keys.meshConfig() : keys.meshNetworks());

/** The model with nothing set: what a removed record falls back to (istiod's defaults). */
const emptyModel = (kind: MeshRecordKind) => (kind === "MeshConfig" ? {} : { networks: {} });

/** The ConfigMap source string: `configmap:<cluster>/<ns>/<name>@<resourceVersion>`. */
export function configMapSource(
  cluster: string,
  namespace: string,
  name: string,
  resourceVersion: string,
): string {
  return `configmap:${cluster}/${namespace}/${name}@${resourceVersion}`;
}

/** The prefix of every source a cluster's mesh ConfigMap writes. */
export function configMapSourcePrefix(cluster: string): string {
  return `configmap:${cluster}/`;
}

/**
 * Stores `next` as the `kind` record, or removes the record when `next` is undefined (only a record
 * whose source starts with `ownedBy`, when given: a ConfigMap never removes a file's record).
 * Returns the push a changed model needs.
 */
export async function putMeshRecord<K extends MeshRecordKind>(
  ctx: Pick<IngestContext, "store" | "now" | "registry">,
  kind: K,
  next: MeshRecords[K] | undefined,
  ownedBy?: string,
): Promise<PushRequest | undefined> {
  const key = storeKey(kind);
  const before = (await ctx.store.get<MeshRecords[K]>(key))?.value;
  if (next === undefined) {
    if (!before || (ownedBy !== undefined && !before.source.startsWith(ownedBy))) return undefined;
    await ctx.store.delete(key);
    return sameJson(before.model, emptyModel(kind)) ? undefined : meshPush(ctx, kind);
  }
  if (before && sameJson(before, next)) return undefined;
  await ctx.store.put(key, next);
  return sameJson(before?.model ?? emptyModel(kind), next.model) ? undefined : meshPush(ctx, kind);
}

/** The Full push of a mesh record change: its ConfigKey names the mesh ConfigMap. */
export function meshPush(ctx: Pick<IngestContext, "now" | "registry">, kind: MeshRecordKind): PushRequest {
  const namespace = ctx.registry.istioNamespace ?? DEFAULT_ISTIO_NAMESPACE;
  return pushRequest({
    full: true,
    configs: [configKeyString({ kind, namespace, name: MESH_CONFIGMAP_NAME })],
    reason: kind === "MeshConfig" ? "global" : "networks",
    start: ctx.now(),
  });
}
