/**
 * ServiceEntry: each cluster's copy stored under keys.config(), its hosts stored as External
 * Service records (keys.externalService()) beside the Kubernetes ones, its endpoints in the
 * External shard of each host. As Istio's serviceEntryHandler: an UPDATE changing nothing the
 * registry reads pushes nothing (needsPush); services added, removed or changed are a Full push
 * (reason `service`) naming those hosts, old ∪ new; a change of endpoints only is EDS.
 */
import { configKeyString, mergeAll, type PushRequest, pushRequest } from "../../model/index.ts";
import { externalServices } from "../../registry/istio/external-services.ts";
import { serviceEntryPushScope } from "../../registry/istio/push-scope.ts";
import {
  isDnsServiceEntry,
  type ServiceEntrySpec,
  serviceEntryUnsupportedFields,
} from "../../registry/istio/service-entry.ts";
import { keys } from "../../store/index.ts";
import type { IngestContext } from "../context.ts";
import {
  externalConfigHandler,
  forgetSelectingEntries,
  namespaceConfigs,
  refreshExternalShard,
  type StoredServiceEntry,
} from "./external-registry.ts";
import { type KindHandler, sameJson } from "./handler.ts";

/** Notes, once per batch, what the entry sets that is accepted but not served. */
function noteUnsupported(ctx: IngestContext, se: StoredServiceEntry): void {
  const at = `ServiceEntry ${se.namespace}/${se.name}`;
  const spec = se.spec as ServiceEntrySpec & Record<string, unknown>;
  for (const path of serviceEntryUnsupportedFields(spec)) ctx.unsupported?.add(`${at}: ${path}`);
  if (isDnsServiceEntry(spec) && (spec.endpoints?.length ?? 0) > 1)
    ctx.unsupported?.add(
      `${at}: spec.endpoints[1] (resolution ${spec.resolution}: a proxyless gRPC LOGICAL_DNS cluster resolves one name; the first endpoint is used)`,
    );
}

/** Writes the entry's External service records: the hosts it declares now, none of those it dropped. */
async function writeServices(
  ctx: IngestContext,
  old: StoredServiceEntry | undefined,
  next: StoredServiceEntry | undefined,
): Promise<void> {
  const c = (next ?? old) as StoredServiceEntry;
  const now = next ? externalServices(next) : [];
  const keep = new Set(now.map((s) => s.hostname));
  for (const s of old ? externalServices(old) : [])
    if (!keep.has(s.hostname))
      await ctx.store.delete(keys.externalService(c.namespace, s.hostname, ctx.cluster, c.name));
  for (const s of now) {
    const key = keys.externalService(c.namespace, s.hostname, ctx.cluster, c.name);
    const stored = (await ctx.store.get(key))?.value;
    if (!sameJson(stored, s)) await ctx.store.put(key, s);
  }
}

/** Applies a ServiceEntry change (either side undefined for an add or a delete) and returns its push. */
async function serviceEntryChange(
  ctx: IngestContext,
  old: StoredServiceEntry | undefined,
  next: StoredServiceEntry | undefined,
): Promise<PushRequest | undefined> {
  const namespace = ((next ?? old) as StoredServiceEntry).namespace;
  const scope = serviceEntryPushScope(old, next);
  forgetSelectingEntries(ctx, namespace);
  await writeServices(ctx, old, next);
  const configs = await namespaceConfigs(ctx, namespace);
  const pushes: PushRequest[] = [];
  for (const host of new Set([...scope.endpointHosts, ...scope.removedHosts])) {
    const push = await refreshExternalShard(ctx, namespace, host, configs);
    if (push) pushes.push(push);
  }
  if (scope.full)
    pushes.push(
      pushRequest({
        full: true,
        configs: scope.configsUpdated.map(configKeyString),
        // Istio's serviceEntryHandler pushes with reason ServiceUpdate.
        reason: "service",
        start: ctx.now(),
      }),
    );
  return mergeAll(pushes);
}

/** ServiceEntry ingest (see the file comment). */
export const serviceEntryHandler: KindHandler = externalConfigHandler(
  "ServiceEntry",
  noteUnsupported,
  serviceEntryChange,
);
