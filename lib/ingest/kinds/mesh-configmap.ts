/**
 * The mesh ConfigMap (`istio` in ISTIO_NAMESPACE, as istiod's kubemesh watcher reads it): its `mesh`
 * key becomes the StoredMeshConfig and its `meshNetworks` key the StoredMeshNetworks
 * (lib/ingest/mesh-records.ts pushes a changed model). A key the ConfigMap lacks, its deletion, or a
 * resync without it removes that record (istiod falls back to its defaults), but never a record a
 * file wrote: MESH_CONFIG_FILE / MESH_NETWORKS_FILE, when set, own their key and the ConfigMap's
 * value for it is ignored (noted in the answer's `unsupported`). A ConfigMap in another namespace
 * is refused per object; an invalid one was already refused whole by its check.
 */
import type { PushRequest } from "../../model/index.ts";
import { mergeAll } from "../../model/index.ts";
import {
  DEFAULT_ISTIO_NAMESPACE,
  MESH_CONFIGMAP_NAME,
  MESH_KEY,
  MESH_NETWORKS_KEY,
  readMeshConfigMap,
} from "../../registry/mesh/istio-configmap.ts";
import type { IngestContext, Outcome } from "../context.ts";
import type { KubeObject } from "../events.ts";
import { configMapSource, configMapSourcePrefix, putMeshRecord } from "../mesh-records.ts";
import type { KindHandler } from "./handler.ts";

const istioNamespace = (ctx: IngestContext) => ctx.registry.istioNamespace ?? DEFAULT_ISTIO_NAMESPACE;

function outcome(pushes: (PushRequest | undefined)[], changed: boolean): Outcome {
  const push = mergeAll(pushes.filter((p): p is PushRequest => p !== undefined));
  return push || changed ? { kind: "applied", push } : { kind: "unchanged" };
}

/** Stores the mesh ConfigMap's `mesh` and `meshNetworks` as the mesh records; refuses any other ConfigMap. */
export const meshConfigMapHandler: KindHandler = {
  refuse(ctx, obj) {
    const ns = obj.metadata.namespace ?? "";
    if (ns === istioNamespace(ctx) && obj.metadata.name === MESH_CONFIGMAP_NAME) return undefined;
    return {
      field: "metadata.namespace",
      message: `${JSON.stringify(ns)}: only the mesh ConfigMap "${MESH_CONFIGMAP_NAME}" in ISTIO_NAMESPACE "${istioNamespace(ctx)}" is read`,
    };
  },

  async apply(ctx, obj: KubeObject): Promise<Outcome> {
    const read = readMeshConfigMap(obj as unknown as Record<string, unknown>);
    // The kind's check refused an invalid ConfigMap before it got here.
    if (!read.ok)
      throw new Error(`mesh ConfigMap passed its check but does not read: ${read.problem.message}`);
    const { namespace = "", name, resourceVersion = "" } = obj.metadata;
    const source = configMapSource(ctx.cluster, namespace, name, resourceVersion);
    const owned = configMapSourcePrefix(ctx.cluster);
    const files = ctx.registry.meshFiles ?? {};
    const at = `ConfigMap ${namespace}/${name}: data`;
    const { mesh, meshNetworks } = read.value;
    for (const field of mesh?.unsupported ?? []) ctx.unsupported?.add(`${at}.${MESH_KEY}.${field}`);
    for (const key of mesh?.unknown ?? [])
      ctx.unsupported?.add(`${at}.${MESH_KEY}.${key} (not a MeshConfig field: ignored, as istiod does)`);
    const pushes: (PushRequest | undefined)[] = [];
    if (files.mesh !== undefined) {
      if (mesh) ctx.unsupported?.add(`${at}.${MESH_KEY} (ignored: MESH_CONFIG_FILE ${files.mesh} is used)`);
    } else
      pushes.push(
        await putMeshRecord(
          ctx,
          "MeshConfig",
          mesh && { model: mesh.model, unsupported: mesh.unsupported, source },
          owned,
        ),
      );
    if (files.meshNetworks !== undefined) {
      if (meshNetworks)
        ctx.unsupported?.add(
          `${at}.${MESH_NETWORKS_KEY} (ignored: MESH_NETWORKS_FILE ${files.meshNetworks} is used)`,
        );
    } else
      pushes.push(
        await putMeshRecord(ctx, "MeshNetworks", meshNetworks && { model: meshNetworks, source }, owned),
      );
    // The records name the ConfigMap's version: a new version is applied even when its models are not new.
    return outcome(pushes, true);
  },

  async remove(ctx, ref): Promise<Outcome> {
    if (ref.namespace !== istioNamespace(ctx) || ref.name !== MESH_CONFIGMAP_NAME)
      return { kind: "unchanged" };
    const owned = configMapSourcePrefix(ctx.cluster);
    const files = ctx.registry.meshFiles ?? {};
    const pushes = [
      files.mesh === undefined ? await putMeshRecord(ctx, "MeshConfig", undefined, owned) : undefined,
      files.meshNetworks === undefined
        ? await putMeshRecord(ctx, "MeshNetworks", undefined, owned)
        : undefined,
    ];
    return outcome(
      pushes,
      pushes.some((p) => p !== undefined),
    );
  },
};
