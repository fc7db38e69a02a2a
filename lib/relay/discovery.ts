/**
 * API discovery of the kinds the relay watches only while their CRDs are served, as pure decisions
 * (functions/node/relay/discovery.ts does the GETs, functions/node/relay/relay.ts applies the plan):
 *
 * 1. `groupVersionsToFetch`: from GET /apis (an APIGroupList), the versions of each kind's group that
 *    the API server serves and a kind may be served at (networking.istio.io: v1, v1beta1, v1alpha3;
 *    security.istio.io: v1, v1beta1; gateway.networking.k8s.io: v1, v1beta1, v1alpha2).
 * 2. `chooseVersions`: from GET /apis/<group>/<version> (APIResourceLists), per kind the newest of its
 *    descriptor's versions whose list names its resource. A kind is checked per version, not per
 *    group: a group may serve v1 while one of its CRDs is still served at v1beta1 only.
 * 3. `planDiscovery`: what to start, stop or move to another version, with one log line per change.
 *
 * A malformed discovery document is an error (the caller keeps what it watches and retries), never
 * "nothing served": that would resync every CRD kind as empty and delete the mesh's config.
 */
import { type KindDescriptor, kindOf } from "../kinds/descriptors.ts";
import { apiVersionOf, crdKinds, type KindSpec, watchSpec } from "./kinds.ts";

/** A value, or what was wrong with a discovery document. */
export type DiscoveryResult<T> = { ok: true; value: T } | { ok: false; error: string };

/** One group version whose APIResourceList is needed. */
export interface GroupVersion {
  group: string;
  version: string;
}

const fail = <T>(error: string): DiscoveryResult<T> => ({ ok: false, error });
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The group versions to fetch, from GET /apis: for each group of `kinds`, the versions the API
 * server lists for it that one of the kinds may be served at, in the kinds' order (newest first).
 * A group absent from the list gives nothing. Errors when the body is no APIGroupList or one of
 * the kinds' groups has a malformed entry.
 */
export function groupVersionsToFetch(
  groupList: unknown,
  kinds: readonly KindDescriptor[],
): DiscoveryResult<GroupVersion[]> {
  if (!isObject(groupList) || !Array.isArray(groupList.groups))
    return fail("GET /apis: the answer is no APIGroupList (no groups array)");
  const wanted = new Map<string, string[]>();
  for (const k of kinds) {
    const versions = wanted.get(k.group) ?? [];
    for (const v of k.versions) if (!versions.includes(v)) versions.push(v);
    wanted.set(k.group, versions);
  }
  const out: GroupVersion[] = [];
  for (const [group, versions] of wanted) {
    const entry = groupList.groups.find((g) => isObject(g) && g.name === group);
    if (entry === undefined) continue;
    const listed = (entry as Record<string, unknown>).versions;
    if (!Array.isArray(listed) || !listed.every((v) => isObject(v) && typeof v.version === "string"))
      return fail(`GET /apis: group ${group} has no list of versions`);
    const served = new Set(listed.map((v) => (v as { version: string }).version));
    for (const version of versions) if (served.has(version)) out.push({ group, version });
  }
  return { ok: true, value: out };
}

/** The key of a group version in `chooseVersions`' map: "networking.istio.io/v1beta1". */
export const groupVersionKey = (gv: GroupVersion): string => `${gv.group}/${gv.version}`;

/**
 * The kinds served now, each at the first of its descriptor's versions (newest first) whose
 * APIResourceList names its resource (subresources such as "virtualservices/status" do not count).
 * `lists` holds one answer per fetched group version, `null` where the API server answered 404 (the
 * version went away between the two GETs: it serves nothing); a version not in `lists` serves
 * nothing. In `kinds` order. Errors when an answer is no APIResourceList.
 */
export function chooseVersions(
  kinds: readonly KindDescriptor[],
  lists: ReadonlyMap<string, unknown>,
): DiscoveryResult<KindSpec[]> {
  const resources = new Map<string, Set<string>>();
  for (const [key, list] of lists) {
    if (list === null) {
      resources.set(key, new Set());
      continue;
    }
    if (!isObject(list) || !Array.isArray(list.resources))
      return fail(`GET /apis/${key}: the answer is no APIResourceList (no resources array)`);
    const names = list.resources.flatMap((r) => (isObject(r) && typeof r.name === "string" ? [r.name] : []));
    resources.set(key, new Set(names));
  }
  const served: KindSpec[] = [];
  for (const k of kinds) {
    const version = k.versions.find((version) =>
      resources.get(groupVersionKey({ group: k.group, version }))?.has(k.resource),
    );
    if (version !== undefined) served.push(watchSpec(k, version));
  }
  return { ok: true, value: served };
}

/** What one discovery changes, and the lines to log about it (one per change). */
export interface DiscoveryPlan {
  /** Served now and not watched: start watching (a list, posted as a resync, then a watch). */
  add: KindSpec[];
  /** Watched and no longer served at any version: stop, then resync as empty. */
  remove: KindSpec[];
  /** Watched at another version than the one to watch now: stop, then list and watch at `to`. */
  move: { from: KindSpec; to: KindSpec }[];
  log: string[];
}

/**
 * Compares the "crd" kinds watched with the ones served. `first`: no discovery succeeded before, so
 * a cluster serving none of an API's CRDs (Istio's, the Gateway API's) says so once per API (later
 * rounds are silent when nothing changed).
 */
export function planDiscovery(
  watched: readonly KindSpec[],
  served: readonly KindSpec[],
  first: boolean,
): DiscoveryPlan {
  const before = new Map(watched.map((k) => [k.kind, k]));
  const now = new Map(served.map((k) => [k.kind, k]));
  const plan: DiscoveryPlan = { add: [], remove: [], move: [], log: [] };
  for (const k of watched) {
    if (now.has(k.kind)) continue;
    plan.remove.push(k);
    plan.log.push(
      `relay: ${k.kind}: no longer served at ${apiVersionOf(k)} nor at another version the relay knows ` +
        "(its CRD is gone): resyncing it as empty",
    );
  }
  for (const to of served) {
    const from = before.get(to.kind);
    if (from === undefined) {
      plan.add.push(to);
      plan.log.push(`relay: ${to.kind}: served at ${apiVersionOf(to)}: listing and watching it`);
    } else if (from.version !== to.version) {
      plan.move.push({ from, to });
      plan.log.push(
        `relay: ${to.kind}: now watched at ${apiVersionOf(to)} (was ${from.version}: ` +
          `${newer(from, to) ? "no longer served" : "a newer version is served"}); ` +
          "relisting and resyncing at the new version",
      );
    }
  }
  if (first)
    for (const api of new Set(crdKinds.map((k) => apiOf(k.group)))) {
      const of = (ks: readonly KindSpec[]) => ks.some((k) => apiOf(k.group) === api);
      if (!of(served) && !of(watched))
        plan.log.push(`relay: no ${api} CRD is served: watching none until one is installed`);
    }
  return plan;
}

/** How a log line names the API of a "crd" group: Istio's groups as one, the Gateway API, any other by its group. */
function apiOf(group: string): string {
  if (group.endsWith(".istio.io")) return "Istio";
  return group === "gateway.networking.k8s.io" ? "Gateway API" : group;
}

/** Whether `from`'s version comes before `to`'s in the kind's versions (newest first). */
function newer(from: KindSpec, to: KindSpec): boolean {
  const versions = kindOf(to.kind)?.versions ?? [];
  return versions.indexOf(from.version) < versions.indexOf(to.version);
}
