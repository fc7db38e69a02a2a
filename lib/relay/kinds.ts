/**
 * The kinds the relay lists and watches, derived from lib/kinds/descriptors.ts: where each one lives
 * on the API server (group, the version chosen for it, resource) and which ones a relay watches
 * always, with RELAY_WATCH_ENDPOINTS, or once API discovery shows them served (lib/relay/discovery.ts).
 */
import { type KindDescriptor, kindTable, type RelayWatch } from "../kinds/descriptors.ts";
import { DEFAULT_ISTIO_NAMESPACE } from "../registry/mesh/istio-configmap.ts";

/** One watched kind at the version the relay watches it: its group/version/resource and its list's kind. */
export interface KindSpec {
  /** The kind's id (lib/kinds/descriptors.ts): what resyncs name and `watching` lists. */
  kind: string;
  /** The kind of its lists on the API server: `<objectKind>List` (`GatewayList` for KubernetesGateway). */
  listKind: string;
  /** "" for the core group (served under /api). */
  group: string;
  /** The version watched: the descriptor's first for fixed kinds, the newest served for "crd" kinds. */
  version: string;
  /** The plural resource name in URLs and RBAC rules. */
  resource: string;
  /** Why the relay watches it: always, with RELAY_WATCH_ENDPOINTS, or while discovery finds it served. */
  relay: RelayWatch;
  /** Set for a kind watched in one namespace only (the mesh ConfigMap in ISTIO_NAMESPACE). */
  namespace?: string;
  /** The `fieldSelector` of its list and watch (`metadata.name=istio`). */
  fieldSelector?: string;
}

/**
 * The watch spec of `d` at `version` (its preferred version when omitted); a kind the relay reads
 * one object of (`watchOnly`) is watched in `istioNamespace` with a name field selector.
 */
export function watchSpec(
  d: KindDescriptor,
  version: string = d.versions[0] ?? "v1",
  istioNamespace: string = DEFAULT_ISTIO_NAMESPACE,
): KindSpec {
  return {
    kind: d.kind,
    listKind: `${d.objectKind}List`,
    group: d.group,
    version,
    resource: d.resource,
    relay: d.relay,
    ...(d.watchOnly && { namespace: istioNamespace, fieldSelector: `metadata.name=${d.watchOnly.name}` }),
  };
}

/** The kinds watched whatever the API server serves, in table order: the "always" kinds, and v1 Endpoints when asked. */
export function fixedKinds(
  watchEndpoints: boolean,
  istioNamespace: string = DEFAULT_ISTIO_NAMESPACE,
): KindSpec[] {
  return kindTable
    .filter((d) => d.relay === "always" || (d.relay === "endpoints" && watchEndpoints))
    .map((d) => watchSpec(d, undefined, istioNamespace));
}

/** The kinds watched only while discovery finds their CRDs served (the Istio and Gateway API kinds), in table order. */
export const crdKinds: readonly KindDescriptor[] = kindTable.filter((d) => d.relay === "crd");

/** The apiVersion of the kind's objects and lists at its watched version: "v1", "networking.istio.io/v1beta1". */
export function apiVersionOf(k: Pick<KindSpec, "group" | "version">): string {
  return k.group === "" ? k.version : `${k.group}/${k.version}`;
}

/**
 * The collection path: cluster-wide (/api/v1/pods, /apis/networking.istio.io/v1beta1/workloadentries),
 * or in the spec's one namespace (/api/v1/namespaces/istio-system/configmaps).
 */
export function kindPath(k: KindSpec): string {
  const base = k.group === "" ? `/api/${k.version}` : `/apis/${k.group}/${k.version}`;
  const ns = k.namespace === undefined ? "" : `/namespaces/${encodeURIComponent(k.namespace)}`;
  return `${base}${ns}/${k.resource}`;
}

/** The query every list and watch of the kind carries beside its own (its field selector, if any). */
export function kindQuery(k: KindSpec): Record<string, string> {
  return k.fieldSelector === undefined ? {} : { fieldSelector: k.fieldSelector };
}

const tableOrder = new Map(kindTable.map((d, i) => [d.kind, i]));

/**
 * The `watching` query parameter's value for a set of kinds: their names in table order, joined by
 * commas ("Namespace,Node,Service,EndpointSlice,Pod,ServiceEntry"). Stable for one set, whatever
 * order the watches started in; a kind the table does not know sorts last, by name.
 */
export function watchingValue(kinds: Iterable<string>): string {
  const rank = (k: string) => tableOrder.get(k) ?? Number.MAX_SAFE_INTEGER;
  return [...new Set(kinds)]
    .sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0))
    .map(encodeURIComponent)
    .join(",");
}
