/**
 * A route's parentRefs resolved as istiod's extractParentReferenceInfo and referenceAllowed do: a
 * Service parent is the mesh (GAMMA), a Gateway parent is each of its listeners, checked for port,
 * sectionName, hostnames, the namespaces and kinds the listener allows. The refusals become the
 * parent's Accepted condition; references to parents istiod does not handle are ignored.
 */

import { hostMatches, hostSubsetOf, isWildcard } from "../istio/visibility.ts";
import type { ListenerParent } from "./gateways.ts";
import { gatewayGroup, type ParentRef } from "./types.ts";

/** Why a parent refused the route (istiod ParentError). */
export interface ParentError {
  reason: "NoMatchingParent" | "NotAllowedByListeners" | "NoMatchingListenerHostname";
  message: string;
}

/** One resolved parent of a route (istiod routeParentReference). */
export interface RouteParent {
  /** "mesh", or `<namespace>/<istio gateway name>`. */
  internalName: string;
  original: ParentRef;
  denied?: ParentError;
  /** The Service a mesh parent names, `<namespace>/<name>`. */
  service?: string;
  /** The listener a Gateway parent is. */
  listener?: ListenerParent;
  banned: string[];
}

/** What resolving parents needs. */
export interface ParentContext {
  /** Listeners by Gateway `<namespace>/<name>`. */
  listeners: ReadonlyMap<string, readonly ListenerParent[]>;
  /** `<namespace>/<name>` of every Service known. */
  services: ReadonlySet<string>;
}

/** istiod's parentRefString: how parents are identified and ordered in the status. */
export function parentRefString(ref: ParentRef, namespace: string): string {
  return `${ref.group ?? gatewayGroup}/${ref.kind ?? "Gateway"}/${ref.name}/${ref.sectionName ?? ""}/${ref.port ?? 0}.${ref.namespace ?? namespace}`;
}

function listenerAllows(
  l: ListenerParent,
  ref: ParentRef,
  routeKind: string,
  hostnames: readonly string[],
  namespace: string,
): ParentError | undefined {
  if (ref.port !== undefined && ref.port !== 0 && ref.port !== l.port)
    return { reason: "NoMatchingParent", message: `port ${ref.port} not found` };
  if (ref.sectionName && ref.sectionName !== l.sectionName)
    return { reason: "NoMatchingParent", message: `sectionName "${ref.sectionName}" not found` };
  const routeHosts = hostnames.length === 0 ? ["*"] : hostnames;
  if (l.hostnames.length > 0) {
    let matched = false;
    let hostMatched = false;
    for (const rh of routeHosts) {
      for (const ph of l.hostnames) {
        const slash = ph.indexOf("/");
        const pns = slash >= 0 ? ph.slice(0, slash) : "*";
        const phost = slash >= 0 ? ph.slice(slash + 1) : ph;
        const hm = hostMatches(phost, rh);
        hostMatched ||= hm;
        if (hm && (pns === "*" || pns === namespace)) matched = true;
      }
    }
    if (!matched)
      return hostMatched
        ? {
            reason: "NotAllowedByListeners",
            message: `hostnames matched parent hostname "${l.originalHostname}", but namespace "${namespace}" is not allowed by the parent`,
          }
        : {
            reason: "NoMatchingListenerHostname",
            message: `no hostnames matched parent hostname "${l.originalHostname}"`,
          };
  }
  if (!l.allowedKinds.some((k) => k.kind === routeKind && k.group === gatewayGroup))
    return {
      reason: "NotAllowedByListeners",
      message: `kind ${gatewayGroup}/v1/${routeKind} is not allowed`,
    };
  return undefined;
}

/** The parents of a route, sorted by parentRefString as istiod sorts them. */
export function resolveParents(
  ctx: ParentContext,
  routeKind: string,
  namespace: string,
  refs: readonly ParentRef[],
  hostnames: readonly string[],
): RouteParent[] {
  const out: RouteParent[] = [];
  for (const ref of refs) {
    const group = ref.group ?? gatewayGroup;
    const kind = ref.kind ?? "Gateway";
    const ns = ref.namespace ?? namespace;
    if (group === "" && kind === "Service") {
      const service = `${ns}/${ref.name}`;
      out.push({
        internalName: "mesh",
        original: ref,
        service,
        banned: [],
        ...(!ctx.services.has(service) && {
          denied: { reason: "NoMatchingParent", message: `parent service: "${ref.name}" not found` },
        }),
      });
      continue;
    }
    if (group !== gatewayGroup || kind !== "Gateway") continue;
    const listeners = ctx.listeners.get(`${ns}/${ref.name}`) ?? [];
    for (const l of listeners) {
      const banned = listeners
        .filter((o) => o !== l && o.port === l.port && o.protocol === l.protocol)
        .map((o) => o.originalHostname)
        .filter((h) => h !== l.originalHostname);
      const denied = listenerAllows(l, ref, routeKind, hostnames, namespace);
      out.push({
        internalName: l.internalName,
        original: ref,
        listener: l,
        banned,
        ...(denied && { denied }),
      });
    }
  }
  const key = (p: RouteParent) => parentRefString(p.original, namespace);
  return out.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** hostnameAllowedByIsolation: a route host goes to the most specific listener hostname only. */
export function hostnameAllowedByIsolation(parent: RouteParent, routeHost: string): boolean {
  const ours = parent.listener?.originalHostname ?? "";
  if (ours.length > 0 && !isWildcard(ours)) return true;
  if (ours.length > 0 && !hostMatches(routeHost, ours)) return false;
  for (const other of parent.banned) {
    if (ours.length > other.length) continue;
    if (hostSubsetOf(routeHost, other)) return false;
  }
  return true;
}
