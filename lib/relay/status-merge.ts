/**
 * How the relay folds edgepilot's computed Gateway API status into an object's live status, as
 * istiod's gateway controller does before its UpdateStatus (pilot/pkg/config/kube/gateway
 * conditions.go setConditions and createRouteStatus, kstatus.UpdateConditionIfChanged): our
 * conditions replace the conditions of their types and keep the rest; a route's parents written by
 * another controller are kept, ours are replaced in place, added or removed; a Gateway's listeners
 * are ours, each keeping the transition times of its live conditions; addresses once reported stay
 * until we report others. Pure: the time to stamp is passed in.
 */
import type { GatewayApiStatus } from "../registry/gateway-api/gateway-status.ts";

/** The controller name istiod (and edgepilot) writes in a route's `parents` (features.ManagedGatewayController). */
export const gatewayControllerName = "istio.io/gateway-controller";

type Obj = Record<string, unknown>;

/** One metav1.Condition as JSON. */
interface Condition extends Obj {
  type: string;
  status: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const objects = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);

/** Kubernetes' metav1.Time for `ms`: RFC 3339 in whole seconds, UTC, as the API server stores it. */
export function kubeTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");
}

/**
 * `ours` set over `existing` as istiod's setConditions: in type order, a new type is appended; an
 * existing one with the same status, message and observedGeneration is kept as it is; otherwise it
 * is replaced, keeping its lastTransitionTime when the status did not change, else stamped `now`.
 * A condition without observedGeneration gets `generation`.
 */
export function mergeConditions(
  existing: unknown,
  ours: unknown,
  generation: number | undefined,
  now: string,
): Obj[] {
  const out = objects(existing).map((c) => ({ ...c }));
  const wanted = objects(ours)
    .filter((c): c is Condition => typeof c.type === "string" && typeof c.status === "string")
    .sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
  for (const c of wanted) {
    const observed = c.observedGeneration ?? generation;
    const next: Condition = {
      type: c.type,
      status: c.status,
      ...(observed !== undefined && { observedGeneration: observed }),
      lastTransitionTime: now,
      reason: c.reason ?? "",
      message: c.message ?? "",
    };
    const at = out.findIndex((e) => e.type === c.type);
    if (at < 0) {
      out.push(next);
      continue;
    }
    const live = out[at] as Condition;
    if (live.status === next.status) {
      if (live.message === next.message && live.observedGeneration === next.observedGeneration) continue;
      if (typeof live.lastTransitionTime === "string") next.lastTransitionTime = live.lastTransitionTime;
    }
    out[at] = next;
  }
  return out;
}

/**
 * istiod's parentRefString: the identity of a route's parent, defaults filled in (a Gateway of the
 * Gateway API in the route's own namespace), so two spellings of one parent are one entry.
 */
export function parentRefKey(ref: unknown, routeNamespace: string): string {
  const r = isObj(ref) ? ref : {};
  const str = (v: unknown, d: string) => (typeof v === "string" ? v : d);
  return (
    `${str(r.group, "gateway.networking.k8s.io")}/${str(r.kind, "Gateway")}/${str(r.name, "")}/` +
    `${str(r.sectionName, "")}/${typeof r.port === "number" ? r.port : 0}.${str(r.namespace, routeNamespace)}`
  );
}

/**
 * A route's `parents` as istiod's createRouteStatus leaves them: every entry of another controller
 * kept where it is; each of ours replaced in place by the entry for the same parent (its
 * conditions merged with the live ones), dropped when we no longer report that parent; new
 * parents appended in descending parent order.
 */
export function mergeParents(
  existing: unknown,
  ours: unknown,
  routeNamespace: string,
  generation: number | undefined,
  now: string,
): Obj[] {
  const live = objects(existing);
  const mine = (p: Obj) => p.controllerName === gatewayControllerName;
  const index = new Map<string, number>();
  live.forEach((p, i) => {
    const key = parentRefKey(p.parentRef, routeNamespace);
    if (mine(p) && !index.has(key)) index.set(key, i);
  });
  const out: (Obj | undefined)[] = [...live];
  const appended: [string, Obj][] = [];
  const reported = new Set<string>();
  for (const p of objects(ours)) {
    const key = parentRefKey(p.parentRef, routeNamespace);
    if (reported.has(key)) continue;
    reported.add(key);
    const at = index.get(key);
    const entry: Obj = {
      ...p,
      controllerName: gatewayControllerName,
      conditions: mergeConditions(
        at === undefined ? [] : live[at]?.conditions,
        p.conditions,
        generation,
        now,
      ),
    };
    if (at === undefined) appended.push([key, entry]);
    else out[at] = entry;
  }
  // Ours that we no longer report go (another controller's never do).
  for (const [key, at] of index) if (!reported.has(key)) out[at] = undefined;
  appended.sort(([a], [b]) => (a > b ? -1 : a < b ? 1 : 0));
  return [...out.filter((p): p is Obj => p !== undefined), ...appended.map(([, p]) => p)];
}

/** A Gateway's listeners: ours, each listener's conditions merged with the live listener of its name. */
export function mergeListeners(
  existing: unknown,
  ours: unknown,
  generation: number | undefined,
  now: string,
): Obj[] {
  const live = new Map(objects(existing).map((l) => [l.name, l]));
  return objects(ours).map((l) => ({
    ...l,
    conditions: mergeConditions(live.get(l.name)?.conditions, l.conditions, generation, now),
  }));
}

/**
 * The status to write: the live one with `ours` folded in field by field (conditions, parents and
 * listeners merged as above; addresses replaced only when we report some, since istiod never
 * removes an address it reported; any other field ours). Fields we do not report are kept.
 */
export function mergeStatus(current: unknown, ours: GatewayApiStatus, now: string): Obj {
  const out: Obj = isObj(current) ? { ...current } : {};
  const gen = ours.generation;
  for (const [field, value] of Object.entries(ours.status)) {
    if (field === "conditions") out.conditions = mergeConditions(out.conditions, value, gen, now);
    else if (field === "parents")
      out.parents = mergeParents(out.parents, value, ours.namespace ?? "", gen, now);
    else if (field === "listeners") out.listeners = mergeListeners(out.listeners, value, gen, now);
    else if (field === "addresses") {
      if (Array.isArray(value) && value.length > 0) out.addresses = value;
    } else out[field] = value;
  }
  return out;
}

/** Whether two JSON values are equal whatever the order of object keys (array order counts). */
export function sameStatus(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => sameStatus(x, b[i]));
  }
  if (!isObj(a) || !isObj(b)) return false;
  const ka = Object.keys(a).filter((k) => a[k] !== undefined);
  const kb = Object.keys(b).filter((k) => b[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => sameStatus(a[k], b[k]));
}
