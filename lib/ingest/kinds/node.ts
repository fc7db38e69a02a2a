/** v1 Node: the locality of the endpoints that run on it. A change recomputes only the shards with endpoints there. */
import type { PushRequest } from "../../model/index.ts";
import { convertNode } from "../../registry/kube/node.ts";
import type { NodeInfo } from "../../registry/kube/records.ts";
import type { KubeNode } from "../../registry/kube/types.ts";
import { sameJson } from "../../same-json.ts";
import { keys } from "../../store/index.ts";
import type { IngestContext, Outcome } from "../context.ts";
import { dependents, refreshAll } from "../shard-refresh.ts";
import type { KindHandler } from "./handler.ts";

async function refreshNode(ctx: IngestContext, name: string): Promise<PushRequest | undefined> {
  return refreshAll(ctx, await dependents(ctx, [{ on: "node", id: name }]));
}

export const nodeHandler: KindHandler = {
  async apply(ctx, obj): Promise<Outcome> {
    const info = convertNode(obj as unknown as KubeNode);
    const key = keys.node(ctx.cluster, info.name);
    const before = (await ctx.store.get<NodeInfo>(key))?.value;
    if (before && sameJson(before, info)) return { kind: "unchanged" };
    await ctx.store.put(key, info);
    return { kind: "applied", push: await refreshNode(ctx, info.name) };
  },

  async remove(ctx, ref): Promise<Outcome> {
    if (!(await ctx.store.delete(keys.node(ctx.cluster, ref.name)))) return { kind: "unchanged" };
    return { kind: "applied", push: await refreshNode(ctx, ref.name) };
  },
};
