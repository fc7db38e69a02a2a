/**
 * Discovery selectors at generation time: ingest stores every object, and a flush serves only
 * what lives in namespaces a selector matches, per cluster. No selectors: everything is served.
 */
import type { LabelSelector, NamespaceInfo } from "../registry/kube/records.ts";
import { namespaceSelected } from "../registry/kube/selectors.ts";
import { keys, type Store } from "../store/index.ts";
import type { ServiceView } from "./types.ts";

/** Which namespaces are served (createVisibility): one per push context, its lookups cached for that push. */
export type Visibility = ReturnType<typeof createVisibility>;

/** Answers "is namespace ns of cluster c served?", caching lookups for one flush. */
export function createVisibility(store: Store, selectors: readonly LabelSelector[]) {
  const cache = new Map<string, Promise<boolean>>();
  const selected = (cluster: string, namespace: string): Promise<boolean> => {
    if (selectors.length === 0) return Promise.resolve(true);
    const key = keys.namespace(cluster, namespace);
    let answer = cache.get(key);
    if (!answer) {
      answer = store
        .get<NamespaceInfo>(key)
        .then((e) => e !== undefined && namespaceSelected(e.value.labels, [...selectors]));
      cache.set(key, answer);
    }
    return answer;
  };

  /** The view with the services and endpoint shards of unselected namespaces taken out. */
  async function filterView(view: ServiceView): Promise<ServiceView> {
    if (selectors.length === 0) return view;
    const services = [];
    for (const s of view.services) if (await selected(s.clusterId, s.namespace)) services.push(s);
    if (!view.shards) return { ...view, services };
    const shards: typeof view.shards.shards = {};
    for (const [shardKey, endpoints] of Object.entries(view.shards.shards)) {
      const cluster = shardKey.slice(shardKey.indexOf("/") + 1);
      if (await selected(cluster, view.namespace)) shards[shardKey] = endpoints;
    }
    return { ...view, services, shards: { ...view.shards, shards } };
  }

  return { selected, filterView };
}
