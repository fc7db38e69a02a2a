/**
 * The fake API server's discovery: which resources it serves at which versions, and the documents
 * a real API server answers GET /api, /apis and /apis/<group>/<version> with. Core and
 * discovery.k8s.io resources are built in at v1; CRD resources (the Istio and Gateway API kinds) are served only
 * once "installed", at the versions the test names, and may be upgraded or removed at run time.
 */
import { type FakeResource, fakeResources } from "./fake-resources.ts";

/** Kubernetes' version priority (GA, then beta, then alpha; higher numbers first): v1 > v1beta1 > v1alpha3. */
export function byVersionPriority(a: string, b: string): number {
  const rank = (v: string) => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [3, 0, 0];
    const level = m[2] === undefined ? 0 : m[2] === "beta" ? 1 : 2;
    return [level, -Number(m[1]), -Number(m[3] ?? 0)];
  };
  const [x, y] = [rank(a), rank(b)];
  for (let i = 0; i < 3; i++)
    if ((x[i] as number) !== (y[i] as number)) return (x[i] as number) - (y[i] as number);
  return 0;
}

/** What is served: built-in resources always, CRDs at the versions installed. */
export class FakeCrds {
  private readonly versions = new Map<string, string[]>();

  /**
   * Installs or changes the CRDs of `resources` (ids; every Istio CRD when omitted) to serve
   * `versions`, each at those of them its CRD defines.
   */
  serve(versions: readonly string[], resources?: readonly string[]): void {
    for (const r of resources ?? crdResources()) {
      const spec = fakeResources.find((s) => s.crd && s.id === r);
      if (!spec) throw new Error(`fake: ${r} is no CRD`);
      const defined = versions.filter((v) => spec.crdVersions?.includes(v) ?? true);
      if (defined.length === 0) this.versions.delete(r);
      else this.versions.set(r, [...defined].sort(byVersionPriority));
    }
  }

  /** Uninstalls the CRDs of `resources` (ids; every Istio CRD when omitted); returns those that were installed. */
  remove(resources?: readonly string[]): string[] {
    const gone = (resources ?? crdResources()).filter((r) => this.versions.has(r));
    for (const r of gone) this.versions.delete(r);
    return gone;
  }

  /** The versions `spec` is served at now (none for a CRD not installed). */
  versionsOf(spec: FakeResource): string[] {
    return spec.crd ? (this.versions.get(spec.id) ?? []) : [spec.version];
  }

  /** The resource served at group/version under this plural name, if any. */
  find(group: string, version: string, resource: string): FakeResource | undefined {
    return fakeResources.find(
      (s) => s.group === group && s.resource === resource && this.versionsOf(s).includes(version),
    );
  }

  /** GET /apis: every named group with the versions any of its resources is served at, by priority. */
  groupList() {
    const groups = new Map<string, Set<string>>();
    for (const s of fakeResources) {
      if (s.group === "") continue;
      for (const v of this.versionsOf(s)) groups.set(s.group, (groups.get(s.group) ?? new Set()).add(v));
    }
    return {
      kind: "APIGroupList",
      apiVersion: "v1",
      groups: [...groups].map(([name, set]) => {
        const versions = [...set]
          .sort(byVersionPriority)
          .map((version) => ({ groupVersion: `${name}/${version}`, version }));
        return { name, versions, preferredVersion: versions[0] };
      }),
    };
  }

  /** GET /api/v1 or /apis/<group>/<version>: the resources served there (with their /status), or undefined (404). */
  resourceList(group: string, version: string) {
    const served = fakeResources.filter((s) => s.group === group && this.versionsOf(s).includes(version));
    if (served.length === 0) return undefined;
    return {
      kind: "APIResourceList",
      apiVersion: "v1",
      groupVersion: group ? `${group}/${version}` : version,
      resources: served.flatMap((s) => [
        { name: s.resource, kind: s.kind, namespaced: s.namespaced, verbs: ["get", "list", "watch"] },
        ...(s.crd
          ? [
              {
                name: `${s.resource}/status`,
                kind: s.kind,
                namespaced: s.namespaced,
                verbs: ["get", "patch", "update"],
              },
            ]
          : []),
      ]),
    };
  }
}

/** Every Istio CRD the fake knows, by id (what serveCrds and removeCrds take by default). */
export function crdResources(): string[] {
  return fakeResources.filter((s) => s.crd && s.group.endsWith(".istio.io")).map((s) => s.id);
}

/** Every Gateway API CRD the fake knows, by id (`gateways.gateway.networking.k8s.io` for its Gateway). */
export function gatewayApiResources(): string[] {
  return fakeResources.filter((s) => s.crd && s.group === "gateway.networking.k8s.io").map((s) => s.id);
}
