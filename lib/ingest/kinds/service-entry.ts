/**
 * ServiceEntry: each cluster's copy stored under keys.config(), its hosts stored as External
 * Service records (keys.externalService()) beside the Kubernetes ones, its endpoints in the
 * External shard of each host. As Istio's serviceEntryHandler: an UPDATE changing nothing the
 * registry reads pushes nothing (needsPush); services added, removed or changed are a Full push
 * (reason `service`) naming those hosts, old ∪ new; a change of endpoints only is EDS. A change of
 * creationTimestamp alone (an UPDATE, or an entry re-created under the same name) is Full for the
 * hosts where it changes which ServiceEntry wins (precedence: oldest first), and nothing elsewhere.
 */
import {
  type ConfigKey,
  configKeyString,
  mergeAll,
  type PushRequest,
  pushRequest,
  type Service,
  serviceConfigKey,
} from "../../model/index.ts";
import {
  externalServices,
  isExternalService,
  servingServices,
} from "../../registry/istio/external-services.ts";
import { serviceEntryPushScope } from "../../registry/istio/push-scope.ts";
import {
  isDnsServiceEntry,
  type ServiceEntrySpec,
  serviceEntryUnsupportedFields,
} from "../../registry/istio/service-entry.ts";
import type { StoredServiceEntry } from "../../registry/istio/stored.ts";
import { sameJson } from "../../same-json.ts";
import { keys, listAll } from "../../store/index.ts";
import type { IngestContext } from "../context.ts";
import { type ExternalHostEntry, setExternalHost } from "../external-hosts.ts";
import {
  externalConfigHandler,
  forgetSelectingEntries,
  namespaceConfigs,
  refreshExternalShard,
} from "./external-registry.ts";
import type { KindHandler } from "./handler.ts";

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

/**
 * Writes the entry's External service records: the hosts it declares now, none of those it
 * dropped; the host index (external-hosts.ts) follows them.
 */
async function writeServices(
  ctx: IngestContext,
  old: StoredServiceEntry | undefined,
  next: StoredServiceEntry | undefined,
): Promise<void> {
  const c = (next ?? old) as StoredServiceEntry;
  const now = next ? externalServices(next) : [];
  const keep = new Set(now.map((s) => s.hostname));
  const entry: ExternalHostEntry = [c.namespace, ctx.cluster, c.name];
  for (const s of old ? externalServices(old) : [])
    if (!keep.has(s.hostname)) {
      await ctx.store.delete(keys.externalService(c.namespace, s.hostname, ctx.cluster, c.name));
      await setExternalHost(ctx.store, s.hostname, entry, false);
    }
  for (const s of now) {
    await setExternalHost(ctx.store, s.hostname, entry, true);
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
  const reordered = await precedenceChanged(ctx, old, next);
  if (scope.full || reordered.length > 0)
    pushes.push(
      pushRequest({
        full: true,
        configs: [...scope.configsUpdated, ...reordered].map(configKeyString),
        // Istio's serviceEntryHandler pushes with reason ServiceUpdate.
        reason: "service",
        start: ctx.now(),
      }),
    );
  return mergeAll(pushes);
}

/**
 * The hosts whose winning ServiceEntry changes because the entry's creationTimestamp changed (its
 * spec may be the same): for each host it still declares, the stored records of that host (this
 * entry's already rewritten) decide the winner with the old age and with the new one
 * (servingServices); a host where a Kubernetes Service wins, or no other entry competes, never
 * changes. One listing per host of the entry, only when the age changed.
 */
async function precedenceChanged(
  ctx: IngestContext,
  old: StoredServiceEntry | undefined,
  next: StoredServiceEntry | undefined,
): Promise<ConfigKey[]> {
  if (!old || !next || old.creationTimestamp === next.creationTimestamp) return [];
  const before = new Map(externalServices(old).map((s) => [s.hostname, s]));
  const out: ConfigKey[] = [];
  for (const now of externalServices(next)) {
    const was = before.get(now.hostname);
    if (!was) continue; // a host new to the entry is Full already (serviceEntryPushScope)
    const records = (await listAll<Service>(ctx.store, keys.servicePrefix(next.namespace, now.hostname))).map(
      (e) => e.value,
    );
    const mine = (s: Service) =>
      isExternalService(s) && s.serviceEntry.name === next.name && s.clusterId === ctx.cluster;
    const others = records.filter((s) => !mine(s));
    if (winner([...others, was]) !== winner([...others, now]))
      out.push(serviceConfigKey(now.hostname, next.namespace));
  }
  return out;
}

/** Which entry serves a host among `records` (its cluster and name), or "kubernetes". */
function winner(records: readonly Service[]): string {
  const serving = servingServices(records);
  const first = serving[0];
  if (!first || !isExternalService(first)) return "kubernetes";
  return `${first.clusterId}\n${first.serviceEntry.name}`;
}

/** ServiceEntry ingest (see the file comment). */
export const serviceEntryHandler: KindHandler = externalConfigHandler(
  "ServiceEntry",
  noteUnsupported,
  serviceEntryChange,
);
