/**
 * /debug/configz: the Istio configs held (keys.configs()), as Kubernetes objects like istiod's
 * configz (kind, apiVersion, metadata, spec), each with the cluster that reported it. Paged: a
 * page is at most `limit` configs and ends early past maxPageBytes of JSON (specs can be large).
 */
import type { RejectedRecord } from "../ingest/rejected.ts";
import { kindOf } from "../kinds/descriptors.ts";
import { type IstioConfig, type IstioKind, istioKinds } from "../registry/istio/common.ts";
import { keys } from "../store/keys.ts";
import type { Store } from "../store/store.ts";
import { type DebugList, mapPage, readPage } from "./page.ts";
import type { Parsed } from "./params.ts";

/** One config as configz shows it. */
export interface ConfigzItem {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace: string;
    resourceVersion: string;
    labels?: Record<string, string>;
    creationTimestamp?: string;
  };
  spec: unknown;
  /** The cluster whose API server reported it (edgepilot keeps one copy per cluster). */
  cluster: string;
}

/** The Kubernetes form of a stored config. Pure. */
export function configzItem(c: IstioConfig & { creationTimestamp?: string }): ConfigzItem {
  return {
    apiVersion: kindOf(c.kind)?.apiVersions[0] ?? "networking.istio.io/v1",
    // The object's kind, as the API server shows it: a KubernetesGateway is a Gateway of its group.
    kind: kindOf(c.kind)?.objectKind ?? c.kind,
    metadata: {
      name: c.name,
      namespace: c.namespace,
      resourceVersion: c.resourceVersion,
      ...(Object.keys(c.labels).length > 0 && { labels: c.labels }),
      ...(c.creationTimestamp !== undefined && { creationTimestamp: c.creationTimestamp }),
    },
    spec: c.spec,
    cluster: c.clusterId,
  };
}

/** What GET /debug/configz was asked: a kind, and a namespace of it, narrow the listing; `rejected` lists refusals instead. */
export interface ConfigzQuery {
  limit: number;
  cursor?: string;
  kind?: string;
  namespace?: string;
  rejected?: boolean;
}

/** The configs of one page, in key order (kind, namespace, name, cluster). */
export async function readConfigz(store: Store, q: ConfigzQuery): Promise<Parsed<DebugList<ConfigzItem>>> {
  if (q.kind !== undefined && !(istioKinds as readonly string[]).includes(q.kind))
    return { ok: false, error: `query parameter kind must be one of ${istioKinds.join(", ")}` };
  if (q.namespace !== undefined && q.kind === undefined)
    return { ok: false, error: "query parameter namespace needs kind (configs are kept by kind first)" };
  const kind = q.kind as IstioKind | undefined;
  const prefix =
    kind === undefined
      ? keys.configs()
      : q.namespace === undefined
        ? keys.configPrefix(kind)
        : keys.configsIn(kind, q.namespace);
  const page = await readPage<IstioConfig>(store, prefix, q.limit, q.cursor);
  if (!page.ok) return page;
  return { ok: true, value: mapPage(page.value, (e) => configzItem(e.value), true) };
}

/** configz?rejected: the objects whose latest version ingest refused (any kind), by cluster, kind, namespace, name. */
export async function readRejected(
  store: Store,
  q: ConfigzQuery,
): Promise<Parsed<DebugList<RejectedRecord>>> {
  if (q.kind !== undefined || q.namespace !== undefined)
    return {
      ok: false,
      error: "query parameter rejected takes no kind or namespace (refusals are kept by cluster)",
    };
  const page = await readPage<RejectedRecord>(store, keys.rejectedAll(), q.limit, q.cursor);
  if (!page.ok) return page;
  return { ok: true, value: mapPage(page.value, (e) => e.value, true) };
}
