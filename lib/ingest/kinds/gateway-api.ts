/**
 * The Gateway API kinds (GatewayClass, Gateway as `KubernetesGateway`, HTTPRoute, GRPCRoute,
 * ReferenceGrant): each cluster's copy stored as a StoredConfig under keys.config(<id>, …) with its
 * metadata.generation (status observedGeneration). As istiod's config handler: an unchanged spec
 * pushes nothing; a change is a Full push whose ConfigsUpdated names the config and the services
 * whose mesh routes (GAMMA) may change: a route's Service parents, old ∪ new; for a GatewayClass,
 * Gateway or ReferenceGrant, every Service some stored mesh route names. Gateway-bound routes change
 * gateway resources only, which the config's own key names.
 */

import { type ConfigKind, configKeyString, pushRequest, serviceConfigKey } from "../../model/index.ts";
import type { ParentRef, RouteSpec } from "../../registry/gateway-api/types.ts";
import type { IstioKind } from "../../registry/istio/common.ts";
import type { StoredConfig } from "../../registry/istio/stored.ts";
import { sameJson } from "../../same-json.ts";
import { keys, listAll } from "../../store/index.ts";
import type { IngestContext, Outcome } from "../context.ts";
import type { KubeObject } from "../events.ts";
import type { KindHandler } from "./handler.ts";
import { toStored } from "./istio-config.ts";

/** The Gateway API kind ids (the kind table's). */
export type GatewayApiKind = Extract<
  IstioKind,
  "GatewayClass" | "KubernetesGateway" | "HTTPRoute" | "GRPCRoute" | "ReferenceGrant"
>;

const routeKinds = ["HTTPRoute", "GRPCRoute"] as const;

/** `<namespace>/<name>` of each Service parent of a route (a mesh route's Service). */
function serviceParents(c: StoredConfig<IstioKind> | undefined): string[] {
  if (!c || !(routeKinds as readonly string[]).includes(c.kind)) return [];
  const refs: ParentRef[] = (c.spec as RouteSpec).parentRefs ?? [];
  return refs
    .filter((r) => r.group === "" && r.kind === "Service")
    .map((r) => `${r.namespace ?? c.namespace}/${r.name}`);
}

/** The Service parents of every stored mesh route, all clusters. */
async function allServiceParents(ctx: IngestContext): Promise<string[]> {
  const out: string[] = [];
  for (const kind of routeKinds)
    for (const e of await listAll<StoredConfig<IstioKind>>(ctx.store, keys.configPrefix(kind)))
      out.push(...serviceParents(e.value));
  return out;
}

async function configPush(ctx: IngestContext, old?: StoredConfig<IstioKind>, next?: StoredConfig<IstioKind>) {
  const c = (next ?? old) as StoredConfig<IstioKind>;
  const parents = (routeKinds as readonly string[]).includes(c.kind)
    ? [...serviceParents(old), ...serviceParents(next)]
    : await allServiceParents(ctx);
  const suffix = ctx.registry.domainSuffix;
  const services = [...new Set(parents)].sort().map((id) => {
    const [ns, name] = id.split("/") as [string, string];
    return configKeyString(serviceConfigKey(`${name}.${ns}.svc.${suffix}`, ns));
  });
  // The kind table's id names the config (istiod's kind.HTTPRoute, kind.KubernetesGateway, …).
  const own = configKeyString({ kind: c.kind as string as ConfigKind, namespace: c.namespace, name: c.name });
  return pushRequest({ full: true, configs: [own, ...services], reason: "config", start: ctx.now() });
}

function handler(kind: GatewayApiKind): KindHandler {
  return {
    async apply(ctx, obj: KubeObject): Promise<Outcome> {
      const generation = (obj.metadata as { generation?: unknown }).generation;
      const next: StoredConfig<IstioKind> = {
        ...toStored(kind, ctx, obj),
        ...(typeof generation === "number" && { generation }),
      };
      const key = keys.config(kind, next.namespace, next.name, ctx.cluster);
      const before = (await ctx.store.get<StoredConfig<IstioKind>>(key))?.value;
      const same =
        before && sameJson(before.spec, next.spec) && before.creationTimestamp === next.creationTimestamp;
      if (same && before.generation === next.generation && sameJson(before.labels, next.labels))
        return { kind: "unchanged" };
      await ctx.store.put(key, next);
      // needsPush: the same spec generates the same configs (a new generation alone changes no route).
      if (same) return { kind: "unchanged" };
      return { kind: "applied", push: await configPush(ctx, before, next) };
    },

    async remove(ctx, ref): Promise<Outcome> {
      const key = keys.config(kind, ref.namespace, ref.name, ctx.cluster);
      const before = (await ctx.store.get<StoredConfig<IstioKind>>(key))?.value;
      if (!before) return { kind: "unchanged" };
      await ctx.store.delete(key);
      return { kind: "applied", push: await configPush(ctx, before, undefined) };
    },
  };
}

/** The handlers of the Gateway API kinds, by kind id; the kind table registers them. */
export const gatewayApiHandlers: Record<GatewayApiKind, KindHandler> = {
  GatewayClass: handler("GatewayClass"),
  KubernetesGateway: handler("KubernetesGateway"),
  HTTPRoute: handler("HTTPRoute"),
  GRPCRoute: handler("GRPCRoute"),
  ReferenceGrant: handler("ReferenceGrant"),
};
