/**
 * v1 Namespace: its labels decide, with discovery selectors, whether its services are served.
 * A namespace that starts or stops matching is a full push for every service in it. Its network
 * label is its endpoints' network when their pod has none: a change re-derives the namespace's
 * shards in this cluster; on the system namespace it is the cluster's network (network-refresh.ts).
 */
import {
  configKeyString,
  mergeAll,
  type PushRequest,
  pushRequest,
  type Service,
  serviceConfigKey,
} from "../../model/index.ts";
import { systemNamespaceKey } from "../../push/network-refresh.ts";
import { NETWORK_LABEL } from "../../registry/kube/endpoint-builder.ts";
import { convertNamespace } from "../../registry/kube/namespace.ts";
import type { NamespaceInfo } from "../../registry/kube/records.ts";
import { namespaceSelected } from "../../registry/kube/selectors.ts";
import type { KubeNamespace } from "../../registry/kube/types.ts";
import { DEFAULT_ISTIO_NAMESPACE } from "../../registry/mesh/istio-configmap.ts";
import { sameJson } from "../../same-json.ts";
import { keys, listAll } from "../../store/index.ts";
import type { IngestContext, Outcome } from "../context.ts";
import { ingestMesh } from "../mesh.ts";
import { refreshShard, storedPieces } from "../shard-refresh.ts";
import type { KindHandler } from "./handler.ts";

async function selectionPush(ctx: IngestContext, name: string, before: boolean, after: boolean) {
  if (before === after) return undefined;
  const hosts = new Set<string>();
  for (const e of await listAll<Service>(ctx.store, keys.servicesIn(name))) hosts.add(e.value.hostname);
  if (hosts.size === 0) return undefined;
  const configs = [...hosts].map((h) => configKeyString(serviceConfigKey(h, name)));
  return pushRequest({ full: true, configs, reason: "namespace", start: ctx.now() });
}

/**
 * When the network label changed: every shard of the namespace's services from this cluster joined
 * again (their endpoints' network), and on the system namespace a push naming it.
 */
async function networkPush(
  ctx: IngestContext,
  name: string,
  before: NamespaceInfo | undefined,
  after: NamespaceInfo | undefined,
): Promise<PushRequest | undefined> {
  const network = after?.labels[NETWORK_LABEL] ?? "";
  if ((before?.labels[NETWORK_LABEL] ?? "") === network) return undefined;
  const pushes: (PushRequest | undefined)[] = [];
  const hosts = new Set<string>();
  for (const e of await listAll<Service>(ctx.store, keys.servicesIn(name))) hosts.add(e.value.hostname);
  for (const hostname of [...hosts].sort()) {
    const svc = { namespace: name, hostname };
    // Only services with endpoints from this cluster have anything to join again.
    const stored = await storedPieces(ctx, svc);
    if (stored.size > 0) pushes.push(await refreshShard(ctx, svc, undefined, undefined, stored));
  }
  if (name === (ctx.registry.istioNamespace ?? DEFAULT_ISTIO_NAMESPACE))
    pushes.push(
      pushRequest({ full: true, configs: [systemNamespaceKey(name)], reason: "namespace", start: ctx.now() }),
    );
  return mergeAll(pushes.filter((p): p is PushRequest => p !== undefined));
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
    const selection = await selectionPush(
      ctx,
      info.name,
      await selected(ctx, before),
      await selected(ctx, info),
    );
    return { kind: "applied", push: merged(selection, await networkPush(ctx, info.name, before, info)) };
  },

  async remove(ctx, ref): Promise<Outcome> {
    const key = keys.namespace(ctx.cluster, ref.name);
    const before = (await ctx.store.get<NamespaceInfo>(key))?.value;
    if (!before) return { kind: "unchanged" };
    await ctx.store.delete(key);
    const selection = await selectionPush(
      ctx,
      ref.name,
      await selected(ctx, before),
      await selected(ctx, undefined),
    );
    return { kind: "applied", push: merged(selection, await networkPush(ctx, ref.name, before, undefined)) };
  },
};

function merged(a: PushRequest | undefined, b: PushRequest | undefined): PushRequest | undefined {
  return mergeAll([a, b].filter((p): p is PushRequest => p !== undefined));
}
