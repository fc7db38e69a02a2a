/**
 * One HTTPRoute or GRPCRoute ▶ its per-parent VirtualServices (before merging) and its status, as
 * istiod's HTTPRouteCollection / GRPCRouteCollection and createRouteStatus do. Mesh parents get
 * rules converted without ReferenceGrant enforcement (istiod's mesh semantics), Gateway parents with it.
 */

import { type Condition, type ConditionSpec, setConditions } from "./conditions.ts";
import { type ConfigError, type IstioHttpRoute, sortHttpRoutes } from "./route-matches.ts";
import {
  hostnameAllowedByIsolation,
  type ParentContext,
  parentRefString,
  type RouteParent,
  resolveParents,
} from "./route-parents.ts";
import { convertRule, type RuleContext } from "./route-rules.ts";
import { type GrpcMatch, generatedSuffix, type HttpMatch, istioController, type RouteSpec } from "./types.ts";

/** A route as the translation reads it. */
export interface RouteInput {
  kind: "HTTPRoute" | "GRPCRoute";
  namespace: string;
  name: string;
  generation?: number;
  creationTimestamp?: string;
  spec: RouteSpec<HttpMatch | GrpcMatch>;
}

/** One VirtualService a route makes for one parent and host, with the key istiod merges by. */
export interface BaseVirtualService {
  key: string;
  name: string;
  namespace: string;
  creationTimestamp?: string;
  mesh: boolean;
  /** The namespace of the Service a mesh route is for. */
  serviceNamespace?: string;
  spec: { gateways: string[]; hosts: string[]; http: IstioHttpRoute[] };
}

/** A route's translation: its VirtualServices, its status parents, the listeners it attached to. */
export interface TranslatedRoute {
  virtualServices: BaseVirtualService[];
  parents: Record<string, unknown>[];
  /** `<gateway ns>/<gateway name>/<listener>` of each listener accepting it. */
  attachments: string[];
}

interface Conversion {
  routes: IstioHttpRoute[];
  error?: ConfigError;
}

function convertAll(ctx: RuleContext, route: RouteInput, enforce: boolean): Conversion {
  const routes: IstioHttpRoute[] = [];
  let error: ConfigError | undefined;
  const id = { kind: route.kind, namespace: route.namespace, name: route.name };
  for (const [n, rule] of (route.spec.rules ?? []).entries()) {
    const matches = rule.matches && rule.matches.length > 0 ? rule.matches.map((m) => [m]) : [undefined];
    for (const m of matches) {
      const r = convertRule(ctx, id, m ? { ...rule, matches: m } : { ...rule, matches: [] }, n, enforce);
      if (!r.route) return { routes: [], ...(r.error && { error: r.error }) };
      if (r.error) error = r.error;
      routes.push(r.route);
    }
  }
  return { routes, ...(error && { error }) };
}

/** augmentPortMatch: a mesh parent with a port matches that port only. */
function withPort(routes: IstioHttpRoute[], port: number): IstioHttpRoute[] {
  return routes.map((r) => {
    const match = r.match && r.match.length > 0 ? r.match.map((m) => ({ ...m, port })) : [{ port }];
    return Object.fromEntries(
      Object.entries({ ...r, match }).sort(([a], [b]) => (a < b ? -1 : 1)),
    ) as IstioHttpRoute;
  });
}

const rank = (p: RouteParent) => {
  switch (p.denied?.reason) {
    case undefined:
      return 0;
    case "NotAllowedByListeners":
      return 1;
    case "NoMatchingListenerHostname":
      return 2;
    default:
      return 4;
  }
};

/** createRouteStatus: one entry per parentRef, the least failing of its listeners, sorted descending. */
function routeStatus(
  route: RouteInput,
  parents: RouteParent[],
  meshError: ConfigError | undefined,
  gwError: ConfigError | undefined,
): Record<string, unknown>[] {
  const byRef = new Map<string, RouteParent[]>();
  for (const p of parents) {
    const k = parentRefString(p.original, route.namespace);
    byRef.set(k, [...(byRef.get(k) ?? []), p]);
  }
  const out: { key: string; value: Record<string, unknown> }[] = [];
  for (const [key, results] of byRef) {
    const success = results.filter((r) => !r.denied).length;
    let report = results[0] as RouteParent;
    let denied = report.denied && { ...report.denied };
    for (const r of results.slice(1)) {
      if (rank(r) < rank(report)) {
        report = r;
        denied = r.denied && { ...r.denied };
      } else if (rank(r) === rank(report) && r.denied) {
        if (!denied) denied = { ...r.denied };
        else denied.message += `; ${r.denied.message}`;
      }
    }
    const conds: Record<string, ConditionSpec> = {
      Accepted: {
        reason: "Accepted",
        message: success > 1 ? `Route was valid, bound to ${success} parents` : "Route was valid",
        ...(denied && { error: { reason: denied.reason, message: denied.message } }),
      },
      ResolvedRefs: { reason: "ResolvedRefs", message: "All references resolved" },
    };
    const routeError = report.internalName === "mesh" ? meshError : gwError;
    if (routeError) (conds.ResolvedRefs as ConditionSpec).error = routeError;
    const conditions: Condition[] = setConditions(route.generation, conds);
    out.push({
      key,
      value: { conditions, controllerName: istioController, parentRef: { ...report.original } },
    });
  }
  return out.sort((a, b) => (a.key > b.key ? -1 : a.key < b.key ? 1 : 0)).map((e) => e.value);
}

/** Translates one route against the parents known. Pure. */
export function translateRoute(ctx: RuleContext & ParentContext, route: RouteInput): TranslatedRoute {
  const parents = resolveParents(
    ctx,
    route.kind,
    route.namespace,
    route.spec.parentRefs ?? [],
    route.spec.hostnames ?? [],
  );
  const needMesh = parents.some((p) => p.internalName === "mesh");
  const needGw = parents.some((p) => p.internalName !== "mesh");
  const mesh = needMesh ? convertAll(ctx, route, false) : { routes: [] };
  const gw = needGw ? convertAll(ctx, route, true) : { routes: [] };
  const accepted = parents
    .filter((p) => !p.denied)
    .sort((a, b) => (a.internalName < b.internalName ? -1 : a.internalName > b.internalName ? 1 : 0));
  const virtualServices: BaseVirtualService[] = [];
  let count = 0;
  for (const p of accepted) {
    let routeKey = p.internalName;
    let hosts = route.spec.hostnames && route.spec.hostnames.length > 0 ? [...route.spec.hostnames] : ["*"];
    let routes = gw.routes;
    const isMesh = p.internalName === "mesh";
    let serviceNamespace: string | undefined;
    if (isMesh) {
      routes = mesh.routes;
      routeKey = route.namespace;
      if (p.original.port !== undefined) {
        routes = withPort(routes, p.original.port);
        routeKey += `/${p.original.port}`;
      }
      const [ns, name] = (p.service as string).split("/") as [string, string];
      serviceNamespace = ns;
      hosts = [`${name}.${ns}.svc.${ctx.domainSuffix}`];
    }
    if (routes.length === 0) continue;
    for (const h of hosts) {
      if (!hostnameAllowedByIsolation(p, h)) continue;
      virtualServices.push({
        key: `${routeKey}/${h}`,
        name: `${route.name}~${count}~${generatedSuffix}`,
        namespace: route.namespace,
        ...(route.creationTimestamp !== undefined && { creationTimestamp: route.creationTimestamp }),
        mesh: isMesh,
        ...(serviceNamespace !== undefined && { serviceNamespace }),
        spec: { gateways: [p.internalName], hosts: [h], http: sortHttpRoutes(routes) },
      });
      count++;
    }
  }
  const attachments = [
    ...new Set(
      accepted.flatMap((p) => (p.listener ? [`${p.listener.gateway}/${p.listener.sectionName}`] : [])),
    ),
  ];
  return { virtualServices, parents: routeStatus(route, parents, mesh.error, gw.error), attachments };
}
