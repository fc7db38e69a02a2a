/**
 * The Gateway API ▶ Istio configs and statuses, the one place its semantics live (istiod's
 * pilot/pkg/config/kube/gateway): GatewayClasses of `istio.io/gateway-controller`, their Gateways
 * ▶ Istio Gateways, HTTPRoutes and GRPCRoutes ▶ VirtualServices bound to those Gateways or, for a
 * Service parent (GAMMA), to `mesh`. VirtualServices of one key (parent and host) merge as istiod's
 * mergeHTTPRoutes: oldest route first, then the Gateway API's match precedence. A consumer route
 * (in another namespace than its Service) is exported to its own namespace only, so only that
 * namespace's clients see it; a producer route is public. Pure: the same inputs give the same output.
 */

import type { StoredConfig } from "../istio/stored.ts";
import { setConditions } from "./conditions.ts";
import type { GatewayServiceInfo } from "./gateway-addresses.ts";
import type { GatewayApiStatus } from "./gateway-status.ts";
import { type ListenerParent, type TranslatedGateway, translateGateway } from "./gateways.ts";
import { createReferenceGrants } from "./reference-grants.ts";
import { sortHttpRoutes } from "./route-matches.ts";
import { type BaseVirtualService, translateRoute } from "./routes.ts";
import type {
  GatewayClassSpec,
  GatewaySpec,
  GrpcMatch,
  HttpMatch,
  ReferenceGrantSpec,
  RouteSpec,
} from "./types.ts";
import { gatewayGroup, istioController } from "./types.ts";

/** A Service as the translation reads it (kube registry records). */
export interface ServiceInput extends GatewayServiceInfo {
  namespace: string;
  name: string;
  hostname: string;
}

/** Everything one translation reads. */
export interface GatewayApiInputs {
  domainSuffix: string;
  gatewayClasses: readonly StoredConfig<"GatewayClass", GatewayClassSpec>[];
  gateways: readonly StoredConfig<"KubernetesGateway", GatewaySpec>[];
  httpRoutes: readonly StoredConfig<"HTTPRoute", RouteSpec<HttpMatch>>[];
  grpcRoutes: readonly StoredConfig<"GRPCRoute", RouteSpec<GrpcMatch>>[];
  referenceGrants: readonly StoredConfig<"ReferenceGrant", ReferenceGrantSpec>[];
  services: readonly ServiceInput[];
  namespaces: readonly { name: string; labels: Record<string, string> }[];
  /** `<namespace>/<name>` of the Secrets known, when the registry has them. */
  secrets?: readonly string[];
  /** istiod's PILOT_ENABLE_ALPHA_GATEWAY_API: TCP listeners accepted (off by default, as in istiod). */
  alphaGatewayApi?: boolean;
}

/** What the translation gives the rest of the control plane (shared with gateway proxies and status). */
export interface GatewayApiTranslation {
  /** Istio Gateways, named as istiod names them, one per listener. */
  gateways: StoredConfig<"Gateway">[];
  /** VirtualServices bound to those Gateways (`<ns>/<name>`) or to `mesh`. */
  virtualServices: StoredConfig<"VirtualService">[];
  statuses: GatewayApiStatus[];
}

/** The GatewayClass istiod handles without its object (gatewaycommon.BuiltinGatewayClasses). */
const builtinClass = "istio";

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** mergeHTTPRoutes: one VirtualService per key, named after the key. */
function merge(base: BaseVirtualService[]): BaseVirtualService[] {
  const byKey = new Map<string, BaseVirtualService[]>();
  for (const vs of base) byKey.set(vs.key, [...(byKey.get(vs.key) ?? []), vs]);
  const out: BaseVirtualService[] = [];
  for (const [key, list] of byKey) {
    const sorted = [...list].sort(
      (a, b) =>
        byText(a.creationTimestamp ?? "", b.creationTimestamp ?? "") ||
        byText(a.namespace, b.namespace) ||
        byText(a.name, b.name),
    );
    const first = sorted[0] as BaseVirtualService;
    const http = sorted.length === 1 ? first.spec.http : sortHttpRoutes(sorted.flatMap((v) => v.spec.http));
    out.push({ ...first, name: key.replaceAll("/", "~"), spec: { ...first.spec, http } });
  }
  return out;
}

function status(
  resource: string,
  kind: string,
  c: { namespace: string; name: string; generation?: number },
  body: Record<string, unknown>,
  clusterScoped = false,
): GatewayApiStatus {
  return {
    group: gatewayGroup,
    version: "v1",
    resource,
    kind,
    ...(!clusterScoped && { namespace: c.namespace }),
    name: c.name,
    ...(c.generation !== undefined && { generation: c.generation }),
    status: body,
  };
}

/** Translates the Gateway API objects of one cluster. Pure. */
export function translateGatewayApi(inputs: GatewayApiInputs): GatewayApiTranslation {
  const grants = createReferenceGrants(inputs.referenceGrants);
  const servicesByHost = new Map<string, Map<string, GatewayServiceInfo>>();
  for (const s of inputs.services) {
    const m = servicesByHost.get(s.hostname) ?? new Map<string, GatewayServiceInfo>();
    servicesByHost.set(s.hostname, m.set(s.namespace, s));
  }
  const services = new Set(inputs.services.map((s) => `${s.namespace}/${s.name}`));
  const ours = new Set(
    inputs.gatewayClasses.filter((c) => c.spec.controllerName === istioController).map((c) => c.name),
  );
  // istiod's built-in class: `istio` is ours even before (or without) its GatewayClass object.
  if (!inputs.gatewayClasses.some((c) => c.name === builtinClass)) ours.add(builtinClass);
  const statuses: GatewayApiStatus[] = inputs.gatewayClasses
    .filter((c) => c.spec.controllerName === istioController)
    .map((c) =>
      status(
        "gatewayclasses",
        "GatewayClass",
        c,
        {
          conditions: setConditions(c.generation, {
            Accepted: { reason: "Accepted", message: "Handled by Istio controller" },
          }),
        },
        true,
      ),
    );
  const gwCtx = {
    domainSuffix: inputs.domainSuffix,
    grants,
    namespaces: new Map(inputs.namespaces.map((n) => [n.name, n.labels])),
    servicesByHost,
    alpha: inputs.alphaGatewayApi === true,
    ...(inputs.secrets && { secrets: new Set(inputs.secrets) }),
  };
  const translated: TranslatedGateway[] = inputs.gateways
    .filter((g) => ours.has(g.spec.gatewayClassName))
    .map((g) => translateGateway(gwCtx, g));
  const listeners = new Map<string, ListenerParent[]>();
  for (const t of translated) listeners.set(`${t.input.namespace}/${t.input.name}`, t.parents);
  const ctx = { services, grants, domainSuffix: inputs.domainSuffix, listeners };
  const attached = new Map<string, number>();
  const base: BaseVirtualService[] = [];
  const routes = [
    ...inputs.httpRoutes.map((r) => ({ ...r, routeKind: "HTTPRoute" as const })),
    ...inputs.grpcRoutes.map((r) => ({ ...r, routeKind: "GRPCRoute" as const })),
  ];
  for (const r of routes) {
    const t = translateRoute(ctx, {
      kind: r.routeKind,
      namespace: r.namespace,
      name: r.name,
      ...(r.generation !== undefined && { generation: r.generation }),
      ...(r.creationTimestamp !== undefined && { creationTimestamp: r.creationTimestamp }),
      spec: r.spec as RouteSpec<HttpMatch | GrpcMatch>,
    });
    base.push(...t.virtualServices);
    for (const a of t.attachments) attached.set(a, (attached.get(a) ?? 0) + 1);
    const resource = r.routeKind === "HTTPRoute" ? "httproutes" : "grpcroutes";
    statuses.push(status(resource, r.routeKind, r, { parents: t.parents }));
  }
  const gateways: StoredConfig<"Gateway">[] = [];
  for (const t of translated) {
    const g = t.input;
    const source = inputs.gateways.find((x) => x.namespace === g.namespace && x.name === g.name);
    for (const s of t.servers)
      gateways.push({
        kind: "Gateway",
        name: s.name,
        namespace: g.namespace,
        clusterId: source?.clusterId ?? "",
        resourceVersion: source?.resourceVersion ?? "",
        labels: {},
        spec: s.spec,
        gatewayServices: t.services,
        ...(source?.creationTimestamp !== undefined && { creationTimestamp: source.creationTimestamp }),
      });
    const listenerStatus = t.status.listeners.map((l) => ({
      ...l,
      attachedRoutes: attached.get(`${g.namespace}/${g.name}/${String(l.name)}`) ?? 0,
    }));
    statuses.push(status("gateways", "Gateway", g, { ...t.status, listeners: listenerStatus }));
  }
  const clusterOf = new Map(routes.map((r) => [`${r.namespace}/${r.name}`, r]));
  const virtualServices = merge(base)
    .map((vs): StoredConfig<"VirtualService"> => {
      const consumer = vs.mesh && vs.serviceNamespace !== vs.namespace;
      const src = clusterOf.get(`${vs.namespace}/${vs.name}`);
      return {
        kind: "VirtualService",
        name: vs.name,
        namespace: vs.namespace,
        clusterId: src?.clusterId ?? routes.find((r) => r.namespace === vs.namespace)?.clusterId ?? "",
        resourceVersion: "",
        labels: {},
        spec: { ...vs.spec, ...(consumer && { exportTo: ["."] }) },
        ...(vs.creationTimestamp !== undefined && { creationTimestamp: vs.creationTimestamp }),
      };
    })
    .sort((a, b) => byText(a.namespace, b.namespace) || byText(a.name, b.name));
  gateways.sort((a, b) => byText(a.namespace, b.namespace) || byText(a.name, b.name));
  return { gateways, virtualServices, statuses };
}
