/**
 * Istio Gateway (networking.istio.io): each cluster's copy stored under keys.config("Gateway", …),
 * the validated spec as it arrived. As istiod's config handler (needsPush): an UPDATE whose spec is
 * unchanged pushes nothing; a change is a Full push (reason `config`) whose ConfigsUpdated names the
 * Gateway alone. A Gateway regenerates no shared resource: only the gateway proxies it selects
 * derive from it (lib/xds/gateway-snapshots.ts), and the push announces it as a refresh
 * (lib/push/push-refresh.ts) so their snapshots go stale.
 */
import { configKeyString, pushRequest } from "../../model/index.ts";
import type { StoredConfig } from "../../registry/istio/stored.ts";
import { sameJson } from "../../same-json.ts";
import { keys } from "../../store/index.ts";
import type { IngestContext, Outcome } from "../context.ts";
import type { KindHandler } from "./handler.ts";
import { toStored } from "./istio-config.ts";

function gatewayPush(ctx: IngestContext, c: StoredConfig<"Gateway">) {
  const configs = [configKeyString({ kind: "Gateway", namespace: c.namespace, name: c.name })];
  // Istio's TriggerReason for a config change is ConfigUpdate ("config").
  return pushRequest({ full: true, configs, reason: "config", start: ctx.now() });
}

/** Stores Istio Gateways; a change pushes Full with the Gateway's ConfigKey only. */
export const istioGatewayHandler: KindHandler = {
  async apply(ctx, obj): Promise<Outcome> {
    const next = toStored("Gateway", ctx, obj);
    const key = keys.config("Gateway", next.namespace, next.name, ctx.cluster);
    const before = (await ctx.store.get<StoredConfig<"Gateway">>(key))?.value;
    // needsPush: the same spec (and age, which orders Gateways when merged) is no change.
    if (before && sameJson(before.spec, next.spec) && before.creationTimestamp === next.creationTimestamp)
      return { kind: "unchanged" };
    await ctx.store.put(key, next);
    return { kind: "applied", push: gatewayPush(ctx, next) };
  },

  async remove(ctx, ref): Promise<Outcome> {
    const key = keys.config("Gateway", ref.namespace, ref.name, ctx.cluster);
    const before = (await ctx.store.get<StoredConfig<"Gateway">>(key))?.value;
    if (!before) return { kind: "unchanged" };
    await ctx.store.delete(key);
    return { kind: "applied", push: gatewayPush(ctx, before) };
  },
};
