/**
 * PeerAuthentication and AuthorizationPolicy: each cluster's copy stored under keys.config(), the
 * validated spec as it arrived. As istiod's config handler (needsPush): an UPDATE whose spec is
 * unchanged pushes nothing; a change is a Full push (reason `config`) whose ConfigsUpdated names the
 * policy alone. A policy regenerates no shared resource of a service (push scope "policy"): it
 * shapes the inbound side and the TLS of the proxies it selects, which the flush announces as a
 * refresh (lib/push/push-refresh.ts) after reloading the push context's security policies.
 */
import { configKeyString, pushRequest } from "../../model/index.ts";
import { dryRunAnnotated } from "../../registry/istio/common.ts";
import type { ConfigMeta } from "../../registry/istio/config-meta.ts";
import { toAuthorizationPolicy, toPeerAuthentication } from "../../registry/istio/security.ts";
import type { StoredConfig } from "../../registry/istio/stored.ts";
import { sameJson } from "../../same-json.ts";
import { keys } from "../../store/index.ts";
import type { IngestContext, Outcome } from "../context.ts";
import type { KindHandler } from "./handler.ts";
import { toStored } from "./istio-config.ts";

/** The security.istio.io kinds. */
export type SecurityKind = "PeerAuthentication" | "AuthorizationPolicy";

const models: Record<SecurityKind, (meta: ConfigMeta, spec: unknown, dryRun: boolean) => unknown> = {
  PeerAuthentication: toPeerAuthentication,
  AuthorizationPolicy: toAuthorizationPolicy,
};

/** The policy as the push context reads it (lib/resources/security-policies.ts). */
function model(c: StoredConfig<SecurityKind>): unknown {
  const meta = {
    name: c.name,
    namespace: c.namespace,
    ...(c.creationTimestamp !== undefined && { creationTimestamp: c.creationTimestamp }),
  };
  return models[c.kind](meta, c.spec, c.dryRun === true);
}

function policyPush(ctx: IngestContext, c: StoredConfig<SecurityKind>) {
  const configs = [configKeyString({ kind: c.kind, namespace: c.namespace, name: c.name })];
  // Istio's TriggerReason for a config change is ConfigUpdate ("config").
  return pushRequest({ full: true, configs, reason: "config", start: ctx.now() });
}

function handler(kind: SecurityKind): KindHandler {
  return {
    async apply(ctx, obj): Promise<Outcome> {
      const next: StoredConfig<SecurityKind> = {
        ...toStored(kind, ctx, obj),
        ...(kind === "AuthorizationPolicy" &&
          dryRunAnnotated(obj.metadata.annotations) && { dryRun: true as const }),
      };
      const key = keys.config(kind, next.namespace, next.name, ctx.cluster);
      const before = (await ctx.store.get<StoredConfig<SecurityKind>>(key))?.value;
      // needsPush: the same spec (and age, which orders policies) is no change.
      if (
        before &&
        sameJson(before.spec, next.spec) &&
        before.creationTimestamp === next.creationTimestamp &&
        before.dryRun === next.dryRun
      )
        return { kind: "unchanged" };
      await ctx.store.put(key, next);
      // A spec rewritten without changing what it means (a mode spelled out as its default) selects and decides the same.
      if (before && sameJson(model(before), model(next))) return { kind: "unchanged" };
      return { kind: "applied", push: policyPush(ctx, next) };
    },

    async remove(ctx, ref): Promise<Outcome> {
      const key = keys.config(kind, ref.namespace, ref.name, ctx.cluster);
      const before = (await ctx.store.get<StoredConfig<SecurityKind>>(key))?.value;
      if (!before) return { kind: "unchanged" };
      await ctx.store.delete(key);
      return { kind: "applied", push: policyPush(ctx, before) };
    },
  };
}

/** Stores PeerAuthentications; a change pushes Full with the policy's ConfigKey only. */
export const peerAuthenticationHandler = handler("PeerAuthentication");
/** Stores AuthorizationPolicies; a change pushes Full with the policy's ConfigKey only. */
export const authorizationPolicyHandler = handler("AuthorizationPolicy");
