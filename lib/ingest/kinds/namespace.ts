/**
 * v1 Namespace: its labels decide, with discovery selectors, whether its services are served.
 * A namespace that starts or stops matching is a full push for every service in it.
 */
import { configKeyString, pushRequest, type Service, serviceConfigKey } from "../../model/index.ts";
import { convertNamespace } from "../../registry/kube/namespace.ts";
import type { NamespaceInfo } from "../../registry/kube/records.ts";
import { namespaceSelected } from "../../registry/kube/selectors.ts";
import type { KubeNamespace } from "../../registry/kube/types.ts";
import { sameJson } from "../../same-json.ts";
import { keys, listAll } from "../../store/index.ts";
import type { IngestContext, Outcome } from "../context.ts";
import { ingestMesh } from "../mesh.ts";
import type { KindHandler } from "./handler.ts";

async function selectionPush(ctx: IngestContext, name: string, before: boolean, after: boolean) {
  if (before === after) return undefined;
  const hosts = new Set<string>();
  for (const e of await listAll<Service>(ctx.store, keys.servicesIn(name))) hosts.add(e.value.hostname);
  if (hosts.size === 0) return undefined;
  const configs = [...hosts].map((h) => configKeyString(serviceConfigKey(h, name)));
  return pushRequest({ full: true, configs, reason: "namespace", start: ctx.now() });
}

/** Under the effective discovery selectors (the stored MeshConfig's, or DISCOVERY_SELECTORS when set). */
async function selected(ctx: IngestContext, info: NamespaceInfo | undefined): Promise<boolean> {
  const selectors = (await ingestMesh(ctx)).discoverySelectors;
  if (selectors.length === 0) return true;
  return info !== undefined && namespaceSelected(info.labels, selectors);
}

export const namespaceHandler: KindHandler = {
  async apply(ctx, obj): Promise<Outcome> {
    const info = convertNamespace(obj as unknown as KubeNamespace);
    const key = keys.namespace(ctx.cluster, info.name);
    const before = (await ctx.store.get<NamespaceInfo>(key))?.value;
    if (before && sameJson(before, info)) return { kind: "unchanged" };
    await ctx.store.put(key, info);
    return {
      kind: "applied",
      push: await selectionPush(ctx, info.name, await selected(ctx, before), await selected(ctx, info)),
    };
  },

  async remove(ctx, ref): Promise<Outcome> {
    const key = keys.namespace(ctx.cluster, ref.name);
    const before = (await ctx.store.get<NamespaceInfo>(key))?.value;
    if (!before) return { kind: "unchanged" };
    await ctx.store.delete(key);
    return {
      kind: "applied",
      push: await selectionPush(ctx, ref.name, await selected(ctx, before), await selected(ctx, undefined)),
    };
  },
};
