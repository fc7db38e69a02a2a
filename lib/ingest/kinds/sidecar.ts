/**
 * Sidecar: each cluster's copy stored under keys.config("Sidecar", …), the validated spec as it
 * arrived. As istiod's config handler (needsPush): an UPDATE whose spec is unchanged pushes nothing;
 * a change is a Full push (reason `config`) whose ConfigsUpdated names the Sidecar alone. A Sidecar
 * regenerates no shared resource: it changes which names a namespace's proxies may see, which the
 * flush records in its view table (lib/push/views.ts) and the streams apply (lib/xds/view-source.ts).
 * A Sidecar with a workloadSelector, and a Sidecar's ingress listeners, shape Envoy sidecars only
 * (lib/xds/sidecar-scope.ts: the sidecars whose LABELS it selects); proxyless views do not apply a
 * workloadSelector, which ingest's summary lists as unsupported for them.
 */
import { configKeyString, pushRequest } from "../../model/index.ts";
import { toSidecar } from "../../registry/istio/sidecar.ts";
import type { StoredConfig } from "../../registry/istio/stored.ts";
import { unsupportedFields } from "../../registry/istio/unsupported-fields.ts";
import { sameJson } from "../../same-json.ts";
import { keys } from "../../store/index.ts";
import type { IngestContext, Outcome } from "../context.ts";
import type { KindHandler } from "./handler.ts";
import { toStored } from "./istio-config.ts";

function sidecarPush(ctx: IngestContext, c: StoredConfig<"Sidecar">) {
  const configs = [configKeyString({ kind: "Sidecar", namespace: c.namespace, name: c.name })];
  // Istio's TriggerReason for a config change is ConfigUpdate ("config").
  return pushRequest({ full: true, configs, reason: "config", start: ctx.now() });
}

/** The Sidecar as the view table uses it (creation time orders Sidecars of one namespace). */
function model(c: StoredConfig<"Sidecar">) {
  return toSidecar(
    {
      name: c.name,
      namespace: c.namespace,
      ...(c.creationTimestamp !== undefined && { creationTimestamp: c.creationTimestamp }),
    },
    c.spec,
  );
}

/** Stores Sidecars; a change pushes Full with the Sidecar's ConfigKey only. */
export const sidecarHandler: KindHandler = {
  async apply(ctx, obj): Promise<Outcome> {
    const next = toStored("Sidecar", ctx, obj);
    const at = `Sidecar ${next.namespace}/${next.name}`;
    // spec.workloadSelector is among them: a per-workload view would be one per proxy's labels.
    for (const path of unsupportedFields("Sidecar", next.spec)) ctx.unsupported?.add(`${at}: ${path}`);
    const key = keys.config("Sidecar", next.namespace, next.name, ctx.cluster);
    const before = (await ctx.store.get<StoredConfig<"Sidecar">>(key))?.value;
    if (before && sameJson(before.spec, next.spec) && before.creationTimestamp === next.creationTimestamp)
      return { kind: "unchanged" };
    await ctx.store.put(key, next);
    // A spec changed only where nothing is implemented scopes proxies the same way.
    if (before && sameJson(model(before), model(next))) return { kind: "unchanged" };
    return { kind: "applied", push: sidecarPush(ctx, next) };
  },

  async remove(ctx, ref): Promise<Outcome> {
    const key = keys.config("Sidecar", ref.namespace, ref.name, ctx.cluster);
    const before = (await ctx.store.get<StoredConfig<"Sidecar">>(key))?.value;
    if (!before) return { kind: "unchanged" };
    await ctx.store.delete(key);
    return { kind: "applied", push: sidecarPush(ctx, before) };
  },
};
