/**
 * The ingest summary's `dangling`: route destinations of the batch's VirtualServices (and of every
 * VirtualService routing to a host whose DestinationRule the batch changed) that name a cluster
 * nobody publishes, judged against the stored services and rules once the batch is applied (so
 * the order of events in a batch does not matter). Istio accepts such routes; the flush answers
 * them UNAVAILABLE (route-vs.ts). Kubernetes service hosts and ServiceEntry hosts are judged alike,
 * as in the flush (consistency.ts destinationHosts). A batch that deletes or re-ports a service
 * (its full push names the host) re-judges every VirtualService routing to that host, so the POST
 * deleting a destination reports the routes it leaves dangling.
 */
import { kubeServiceNamespace, type Service } from "../model/index.ts";
import type { ConfigMeta } from "../registry/istio/config-meta.ts";
import {
  createDestinationRuleIndex,
  type DestinationRuleIndex,
  toDestinationRule,
} from "../registry/istio/destination-rule.ts";
import {
  type DestinationHost,
  danglingReason,
  type ExternalHosts,
  externalDestination,
} from "../registry/istio/route-destinations.ts";
import type { StoredConfig } from "../registry/istio/stored.ts";
import { toVirtualService, type VirtualServiceModel } from "../registry/istio/virtual-service.ts";
import { hostMatches } from "../registry/istio/visibility.ts";
import { routesForPort } from "../registry/istio/vs-routes.ts";
import { loadExternalHosts } from "../resources/external-hosts.ts";
import { expressible } from "../resources/generators/route-match.ts";
import { keys, listAll } from "../store/index.ts";
import type { IngestContext } from "./context.ts";
import { ingestMesh } from "./mesh.ts";

/** What a batch changed that can make a route dangle; filled by the VirtualService/DestinationRule handlers. */
export interface RoutingChanges {
  /** `<ns>/<name>` of VirtualServices applied (not deleted) in this batch. */
  virtualServices: Set<string>;
  /** Hosts of DestinationRules changed or deleted in this batch (old and new). */
  ruleHosts: Set<string>;
}

/** An empty record, for a batch's context. */
export function routingChanges(): RoutingChanges {
  return { virtualServices: new Set(), ruleHosts: new Set() };
}

/**
 * One line per dangling destination, sorted, unique: `VirtualService <ns>/<name>: spec.http[<i>]:
 * <host>[ subset <s>][ port <p>]: <reason>`. Judged: every destination of the batch's
 * VirtualServices, and of the others the destinations to a host whose DestinationRule the batch
 * changed or to a host in `serviceHosts` (see batch-pushes.ts): what the batch made dangling.
 * Empty when the batch changed none of these.
 */
export async function danglingOfBatch(
  ctx: IngestContext,
  serviceHosts: ReadonlySet<string> = new Set(),
): Promise<string[]> {
  const changes = ctx.routing;
  if (
    !changes ||
    (changes.virtualServices.size === 0 && changes.ruleHosts.size === 0 && serviceHosts.size === 0)
  )
    return [];
  const suffix = ctx.registry.domainSuffix;
  const affected = (h: string) =>
    serviceHosts.has(h) || [...changes.ruleHosts].some((r) => hostMatches(r, h));
  const applied = (vs: VirtualServiceModel) => changes.virtualServices.has(`${vs.namespace}/${vs.name}`);
  const checked = (await firstCopies(ctx, "VirtualService"))
    .map((c) => toVirtualService(meta(c), c.spec, suffix))
    .filter((vs) => vs.appliesToMesh && vs.hosts.length > 0)
    .filter((vs) => applied(vs) || destinationHostsOf(vs).some(affected));
  if (checked.length === 0) return [];
  const rules = createDestinationRuleIndex(
    (await firstCopies(ctx, "DestinationRule")).map((c) => toDestinationRule(meta(c), c.spec, suffix)),
    { rootNamespace: (await ingestMesh(ctx)).rootNamespace },
  );
  const hostOf = hostLookup(ctx, rules, await loadExternalHosts(ctx.store));
  const out = new Set<string>();
  // A VirtualService the batch applied: every destination; another: those the batch affected.
  for (const vs of checked)
    for (const line of await danglingLines(vs, hostOf, applied(vs) ? undefined : affected)) out.add(line);
  return [...out].sort();
}

async function danglingLines(
  vs: VirtualServiceModel,
  hostOf: (host: string) => Promise<DestinationHost | undefined>,
  judged?: (host: string) => boolean,
): Promise<string[]> {
  const listen = new Set<number>();
  for (const h of vs.hosts) for (const p of (await hostOf(h))?.ports ?? []) listen.add(p);
  const out: string[] = [];
  // Per listener port, exactly the routes the flush generates; without one, every route (matches a
  // shared route cannot express are left out, as the generator leaves them out).
  const flat = (
    listen.size > 0
      ? [...listen].flatMap((p) => routesForPort(vs, p).map((f) => ({ ...f, p })))
      : vs.http.map((route) => ({ route, p: undefined }))
  ).filter((f) => !("match" in f && f.match && !expressible(f.match)));
  for (const { route, p } of flat) {
    if (route.action.kind !== "route") continue;
    for (const d of route.action.destinations) {
      if (judged && !judged(d.host)) continue;
      const host = await hostOf(d.host);
      const reason = danglingReason(d, p ?? d.port ?? host?.ports[0] ?? 0, host);
      if (reason === undefined) continue;
      const what = `${d.host}${d.subset !== undefined ? ` subset ${d.subset}` : ""}${d.port !== undefined ? ` port ${d.port}` : ""}`;
      out.push(
        `VirtualService ${vs.namespace}/${vs.name}: spec.http[${vs.http.indexOf(route)}]: ${what}: ${reason}`,
      );
    }
  }
  return out;
}

/**
 * What a destination host publishes as the store holds it now (memoized): a Kubernetes service
 * host, its services' ports and the subsets of the rule its namespace sees; another host (or a
 * Kubernetes-form one only an entry declares), as the ServiceEntry registry declares it
 * (externalDestination; undefined, not judged, when only a wildcard entry matches it).
 */
function hostLookup(ctx: IngestContext, rules: DestinationRuleIndex, external: ExternalHosts) {
  const found = new Map<string, Promise<DestinationHost | undefined>>();
  const suffix = ctx.registry.domainSuffix;
  const subsetsIn = (ns: string, host: string) =>
    rules.forService(ns, host, ns)?.rule.subsets.map((s) => s.name) ?? [];
  const read = async (host: string): Promise<DestinationHost | undefined> => {
    const ns = kubeServiceNamespace(host, suffix);
    if (ns !== undefined) {
      const records = await listAll<Service>(ctx.store, keys.servicePrefix(ns, host));
      if (records.length > 0 || !external.declared(host)) {
        const ports = [...new Set(records.flatMap((e) => e.value.ports.map((p) => p.port)))].sort(
          (a, b) => a - b,
        );
        return { ports, subsets: subsetsIn(ns, host) };
      }
    }
    return externalDestination(host, external, (n) => subsetsIn(n, host));
  };
  return (host: string) => {
    let p = found.get(host);
    if (!p) {
      p = read(host);
      found.set(host, p);
    }
    return p;
  };
}

function destinationHostsOf(vs: VirtualServiceModel): string[] {
  return vs.http.flatMap((r) => (r.action.kind === "route" ? r.action.destinations.map((d) => d.host) : []));
}

/** Every stored config of `kind`, the first cluster's copy of each (as the flush reads them). */
async function firstCopies(ctx: IngestContext, kind: StoredConfig["kind"]): Promise<StoredConfig[]> {
  const seen = new Set<string>();
  const out: StoredConfig[] = [];
  for (const e of await listAll<StoredConfig>(ctx.store, keys.configPrefix(kind))) {
    const id = `${e.value.namespace}/${e.value.name}`;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(e.value);
  }
  return out;
}

function meta(c: StoredConfig): ConfigMeta {
  return {
    name: c.name,
    namespace: c.namespace,
    ...(c.creationTimestamp !== undefined && { creationTimestamp: c.creationTimestamp }),
  };
}
