/**
 * loadGatewayApi: the stored Gateway API objects, Services and Namespaces read once and translated
 * (translateGatewayApi). Reads only the config prefixes when the cluster holds no Gateway API object,
 * so a mesh without the Gateway API pays a few empty listings per push.
 */

import type { Service } from "../../model/index.ts";
import { keys, listAll, type Store } from "../../store/index.ts";
import type { StoredConfig } from "../istio/stored.ts";
import type { NamespaceInfo } from "../kube/records.ts";
import { type GatewayApiInputs, type GatewayApiTranslation, translateGatewayApi } from "./translate.ts";

/** What the translation takes from the control plane's settings. */
export interface GatewayApiOptions {
  domainSuffix: string;
  /** istiod's PILOT_ENABLE_ALPHA_GATEWAY_API. */
  alphaGatewayApi?: boolean;
}

/** The Gateway API kind ids (the kind table's) the translation reads. */
export const gatewayApiKinds = [
  "GatewayClass",
  "KubernetesGateway",
  "HTTPRoute",
  "GRPCRoute",
  "ReferenceGrant",
] as const;

/** An empty translation: nothing to serve, nothing to report. */
export const emptyTranslation: GatewayApiTranslation = Object.freeze({
  gateways: [],
  virtualServices: [],
  statuses: [],
}) as GatewayApiTranslation;

/** Every stored config of one kind, the first cluster's copy of each namespace/name (key order). */
async function configs<T>(store: Store, kind: string): Promise<T[]> {
  const seen = new Set<string>();
  const out: T[] = [];
  for (const e of await listAll<StoredConfig<never>>(store, keys.configPrefix(kind))) {
    const id = `${e.value.namespace}/${e.value.name}`;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(e.value as T);
  }
  return out;
}

/** Reads and translates the Gateway API objects of the store, once per call. */
export async function loadGatewayApi(
  store: Store,
  options: GatewayApiOptions,
): Promise<GatewayApiTranslation> {
  const [gatewayClasses, gateways, httpRoutes, grpcRoutes, referenceGrants] = await Promise.all([
    configs<GatewayApiInputs["gatewayClasses"][number]>(store, "GatewayClass"),
    configs<GatewayApiInputs["gateways"][number]>(store, "KubernetesGateway"),
    configs<GatewayApiInputs["httpRoutes"][number]>(store, "HTTPRoute"),
    configs<GatewayApiInputs["grpcRoutes"][number]>(store, "GRPCRoute"),
    configs<GatewayApiInputs["referenceGrants"][number]>(store, "ReferenceGrant"),
  ]);
  if (gatewayClasses.length + gateways.length + httpRoutes.length + grpcRoutes.length === 0)
    return emptyTranslation;
  const byId = new Map<string, GatewayApiInputs["services"][number]>();
  for (const e of await listAll<Service>(store, keys.services())) {
    const s = e.value;
    const id = `${s.namespace}/${s.name}`;
    const ports = s.ports.map((p) => p.port);
    const prev = byId.get(id);
    // One Service across clusters: the union of what each cluster reports.
    byId.set(id, {
      name: s.name,
      namespace: s.namespace,
      hostname: s.hostname,
      ports: [...new Set([...(prev?.ports ?? []), ...ports])].sort((a, b) => a - b),
      externalAddresses: [
        ...new Set([...(prev?.externalAddresses ?? []), ...(s.externalAddresses ?? [])]),
      ].sort(),
    });
  }
  const namespaces = new Map<string, NamespaceInfo>();
  for (const e of await listAll<NamespaceInfo>(store, keys.namespaces()))
    if (!namespaces.has(e.value.name)) namespaces.set(e.value.name, e.value);
  return translateGatewayApi({
    domainSuffix: options.domainSuffix,
    ...(options.alphaGatewayApi !== undefined && { alphaGatewayApi: options.alphaGatewayApi }),
    gatewayClasses,
    gateways,
    httpRoutes,
    grpcRoutes,
    referenceGrants,
    services: [...byId.values()],
    namespaces: [...namespaces.values()],
  });
}
