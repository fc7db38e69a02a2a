/** v1 Service: one cluster's record of a service; any change is a full push for its hostname. */
import {
  configKeyString,
  pushRequest,
  type Service,
  serviceConfigKey,
  serviceHostname,
} from "../../model/index.ts";
import { convertService } from "../../registry/kube/service.ts";
import type { KubeService } from "../../registry/kube/types.ts";
import { sameJson } from "../../same-json.ts";
import { deleteServiceShard } from "../../shards/endpoint-shards.ts";
import { keys } from "../../store/index.ts";
import type { IngestContext, Outcome } from "../context.ts";
import { refreshShard } from "../shard-refresh.ts";
import type { KindHandler } from "./handler.ts";

function servicePush(ctx: IngestContext, hostname: string, namespace: string) {
  const configs = [configKeyString(serviceConfigKey(hostname, namespace))];
  return pushRequest({ full: true, configs, reason: "service", start: ctx.now() });
}

export const serviceHandler: KindHandler = {
  async apply(ctx, obj): Promise<Outcome> {
    const service = convertService(obj as unknown as KubeService, {
      clusterId: ctx.cluster,
      domainSuffix: ctx.registry.domainSuffix,
    });
    const { namespace, hostname } = service;
    const key = keys.service(namespace, hostname, ctx.cluster);
    const current = await ctx.store.get<Service>(key);
    if (current && sameJson(current.value, service)) return { kind: "unchanged" };
    await ctx.store.put(key, service);
    // Slices may have arrived first, or outlived a delete and re-create; publishNotReadyAddresses
    // and headlessness also change which endpoints are served. In a watch batch, noted for its flush.
    if (ctx.slices) ctx.slices.noteService({ namespace, hostname }, service);
    else await refreshShard(ctx, { namespace, hostname }, undefined, service);
    return { kind: "applied", push: servicePush(ctx, hostname, namespace) };
  },

  async remove(ctx, ref): Promise<Outcome> {
    const hostname = serviceHostname(ref.name, ref.namespace, ctx.registry.domainSuffix);
    if (!(await ctx.store.delete(keys.service(ref.namespace, hostname, ctx.cluster))))
      return { kind: "unchanged" };
    await deleteServiceShard(ctx.store, ctx.shard, hostname, ref.namespace);
    return { kind: "applied", push: servicePush(ctx, hostname, ref.namespace) };
  },
};
