/**
 * VirtualService and DestinationRule: each cluster's copy stored under keys.config(), the validated
 * spec as it arrived. As istiod's config handler (needsPush): an UPDATE whose spec is unchanged
 * pushes nothing; a change is a Full push (reason `config`) whose ConfigsUpdated names the config
 * and the services of the hosts it touches, old ∪ new, so the flush regenerates only those.
 */

import { kindOf } from "../../kinds/descriptors.ts";
import {
  type ConfigKey,
  configKeyString,
  pushRequest,
  type Service,
  serviceConfigKey,
} from "../../model/index.ts";
import type { IstioKind } from "../../registry/istio/common.ts";
import {
  destinationRuleScope,
  type PushScope,
  virtualServiceScope,
} from "../../registry/istio/config-scope.ts";
import { toDestinationRule } from "../../registry/istio/destination-rule.ts";
import type { RoutingKind, StoredConfig } from "../../registry/istio/stored.ts";
import { unsupportedFields } from "../../registry/istio/unsupported-fields.ts";
import { toVirtualService } from "../../registry/istio/virtual-service.ts";
import { hostMatches } from "../../registry/istio/visibility.ts";
import { sameJson } from "../../same-json.ts";
import { keys, listAll } from "../../store/index.ts";
import type { IngestContext, Outcome } from "../context.ts";
import type { KubeObject } from "../events.ts";
import { externalHostNamespaces } from "../external-hosts.ts";
import type { KindHandler } from "./handler.ts";

/** The normalized model of a stored config (what generation reads), or undefined. */
function model(c: StoredConfig | undefined, domainSuffix: string) {
  if (!c) return undefined;
  const meta = {
    name: c.name,
    namespace: c.namespace,
    ...(c.creationTimestamp !== undefined && { creationTimestamp: c.creationTimestamp }),
  };
  return c.kind === "VirtualService"
    ? toVirtualService(meta, c.spec, domainSuffix)
    : toDestinationRule(meta, c.spec, domainSuffix);
}

function scopeOf(ctx: IngestContext, old?: StoredConfig, next?: StoredConfig): PushScope {
  // Only VirtualServices and DestinationRules reach here (Sidecars: sidecar.ts).
  const suffix = ctx.registry.domainSuffix;
  const kind = (old ?? next)?.kind;
  if (kind === "VirtualService")
    return virtualServiceScope(
      model(old, suffix) as ReturnType<typeof toVirtualService> | undefined,
      model(next, suffix) as ReturnType<typeof toVirtualService> | undefined,
    );
  return destinationRuleScope(
    model(old, suffix) as ReturnType<typeof toDestinationRule> | undefined,
    model(next, suffix) as ReturnType<typeof toDestinationRule> | undefined,
  );
}

/**
 * The service keys of a scope: a Kubernetes host (`<name>.<ns>.svc.<suffix>`) names its namespace;
 * the namespaces whose ServiceEntries declare a host, of any form, come from the host index (one
 * read for all of them, lib/ingest/external-hosts.ts). A wildcard host may match any service, of
 * either registry: it alone still lists every stored service (once per event).
 */
async function serviceKeys(ctx: IngestContext, scope: PushScope): Promise<ConfigKey[]> {
  const out = new Map<string, ConfigKey>();
  const add = (hostname: string, namespace: string) => {
    const key = serviceConfigKey(hostname, namespace);
    out.set(configKeyString(key), key);
  };
  const svcSuffix = `.svc.${ctx.registry.domainSuffix}`;
  for (const host of scope.hosts) {
    const labels = host.endsWith(svcSuffix) ? host.slice(0, -svcSuffix.length).split(".") : [];
    if (labels.length === 2) add(host, labels[1] as string);
  }
  for (const [host, namespaces] of await externalHostNamespaces(ctx.store, scope.hosts))
    for (const ns of namespaces) add(host, ns);
  if (scope.wildcards.length > 0)
    for (const e of await listAll<Service>(ctx.store, keys.services())) {
      const { hostname, namespace } = e.value;
      if (scope.wildcards.some((w) => hostMatches(w, hostname))) add(hostname, namespace);
    }
  return [...out.values()];
}

async function configPush(ctx: IngestContext, old?: StoredConfig, next?: StoredConfig) {
  const c = (next ?? old) as StoredConfig;
  const configs = [
    configKeyString({ kind: c.kind, namespace: c.namespace, name: c.name }),
    ...(await serviceKeys(ctx, scopeOf(ctx, old, next))).map(configKeyString),
  ];
  // Istio's TriggerReason for a config change is ConfigUpdate ("config").
  return pushRequest({ full: true, configs, reason: "config", start: ctx.now() });
}

/** A plain-JSON value with object keys sorted, so two specs compare as Istio's DeepEqual would. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (typeof v !== "object" || v === null) return v;
  const o = v as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(o)
      .sort()
      .map((k) => [k, canonical(o[k])]),
  );
}

/**
 * A config as stored (every Istio and Gateway API kind): the validated spec and labels with keys
 * sorted, the creation time, and for a kind whose status the relay writes its metadata.generation
 * (status observedGeneration); other kinds leave it out, so their stored shape does not change.
 */
export function toStored<K extends IstioKind>(kind: K, ctx: IngestContext, obj: KubeObject): StoredConfig<K> {
  const { name, namespace = "", resourceVersion = "", labels = {} } = obj.metadata;
  const { creationTimestamp: created, generation } = obj.metadata as {
    creationTimestamp?: unknown;
    generation?: unknown;
  };
  return {
    kind,
    name,
    namespace,
    clusterId: ctx.cluster,
    resourceVersion,
    labels: canonical(labels) as Record<string, string>,
    spec: canonical(obj.spec ?? {}),
    ...(typeof created === "string" && { creationTimestamp: created }),
    ...(Number.isSafeInteger(generation) &&
      kindOf(kind)?.writesStatus && { generation: generation as number }),
  };
}

/** Notes the spec's accepted-but-unimplemented fields (exportTo is applied: lib/push/views.ts). */
function noteUnsupported(ctx: IngestContext, c: StoredConfig): void {
  const at = `${c.kind} ${c.namespace}/${c.name}`;
  for (const path of unsupportedFields(c.kind, c.spec)) ctx.unsupported?.add(`${at}: ${path}`);
}

/** Notes, for the batch's `dangling` (lib/ingest/dangling.ts), a VirtualService applied or a rule's hosts. */
function noteRouting(ctx: IngestContext, suffix: string, old?: StoredConfig, next?: StoredConfig): void {
  const c = (next ?? old) as StoredConfig;
  if (c.kind === "VirtualService") {
    if (next) ctx.routing?.virtualServices.add(`${c.namespace}/${c.name}`);
    return;
  }
  for (const s of [old, next]) {
    const rule = model(s, suffix) as ReturnType<typeof toDestinationRule> | undefined;
    if (rule) ctx.routing?.ruleHosts.add(rule.host);
  }
}

function handler(kind: RoutingKind): KindHandler {
  return {
    async apply(ctx, obj): Promise<Outcome> {
      const next = toStored(kind, ctx, obj);
      noteUnsupported(ctx, next);
      const key = keys.config(kind, next.namespace, next.name, ctx.cluster);
      const before = (await ctx.store.get<StoredConfig>(key))?.value;
      // needsPush: the same spec (and age, which orders configs) is no change.
      if (before && sameJson(before.spec, next.spec) && before.creationTimestamp === next.creationTimestamp)
        return { kind: "unchanged" };
      await ctx.store.put(key, next);
      const suffix = ctx.registry.domainSuffix;
      // A spec changed only where nothing is implemented generates the same resources.
      if (before && sameJson(model(before, suffix), model(next, suffix))) return { kind: "unchanged" };
      noteRouting(ctx, suffix, before, next);
      return { kind: "applied", push: await configPush(ctx, before, next) };
    },

    async remove(ctx, ref): Promise<Outcome> {
      const key = keys.config(kind, ref.namespace, ref.name, ctx.cluster);
      const before = (await ctx.store.get<StoredConfig>(key))?.value;
      if (!before) return { kind: "unchanged" };
      await ctx.store.delete(key);
      noteRouting(ctx, ctx.registry.domainSuffix, before, undefined);
      return { kind: "applied", push: await configPush(ctx, before, undefined) };
    },
  };
}

export const virtualServiceHandler = handler("VirtualService");
export const destinationRuleHandler = handler("DestinationRule");
