/** The fake API server's object store: resources, a global resourceVersion, and the event history watches replay. */

/** One resource the fake serves. */
export interface FakeResource {
  resource: string;
  kind: string;
  group: string;
  /** The version built-in resources are served at, and the version objects are stored at. */
  version: string;
  namespaced: boolean;
  /** A CRD (the Istio kinds): served only while installed, at the versions installed (fake-crds.ts). */
  crd?: boolean;
  /** A CRD's versions as Istio defines them: installing it at others serves none of those. */
  crdVersions?: readonly string[];
}

const r = (
  resource: string,
  kind: string,
  group: string,
  namespaced: boolean,
  crdVersions?: readonly string[],
): FakeResource => ({
  resource,
  kind,
  group,
  version: "v1",
  namespaced,
  ...(crdVersions && { crd: true, crdVersions }),
});

/** Everything the relay may watch, at its real group (and, for built-in kinds, version). */
export const fakeResources: readonly FakeResource[] = [
  r("services", "Service", "", true),
  r("endpoints", "Endpoints", "", true),
  r("pods", "Pod", "", true),
  r("nodes", "Node", "", false),
  r("namespaces", "Namespace", "", false),
  r("configmaps", "ConfigMap", "", true),
  r("secrets", "Secret", "", true),
  r("endpointslices", "EndpointSlice", "discovery.k8s.io", true),
  ...[
    "serviceentries:ServiceEntry",
    "workloadentries:WorkloadEntry",
    "virtualservices:VirtualService",
    "destinationrules:DestinationRule",
    "sidecars:Sidecar",
    "gateways:Gateway",
  ].map((s) => {
    const [res, kind] = s.split(":") as [string, string];
    return r(res, kind, "networking.istio.io", true, ["v1", "v1beta1", "v1alpha3"]);
  }),
  // security.istio.io never served v1alpha3 (its v1beta1 came first, then v1 with Istio 1.22).
  ...["peerauthentications:PeerAuthentication", "authorizationpolicies:AuthorizationPolicy"].map((s) => {
    const [res, kind] = s.split(":") as [string, string];
    return r(res, kind, "security.istio.io", true, ["v1", "v1beta1"]);
  }),
];

/** A Kubernetes object as stored: metadata always has name, and resourceVersion once stored. */
export interface KubeObj {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string; [k: string]: unknown };
  [k: string]: unknown;
}

/** One recorded change. */
export interface HistoryEvent {
  rv: number;
  resource: string;
  type: "ADDED" | "MODIFIED" | "DELETED";
  object: KubeObj;
}

/** The store: objects per resource, every change since the last compaction. */
export class FakeStore {
  rv = 100;
  /** Watches from a resourceVersion below this are answered 410 Gone. */
  compactedRv = 0;
  readonly objects = new Map<string, Map<string, KubeObj>>();
  readonly history: HistoryEvent[] = [];
  private uid = 0;

  constructor(private readonly onChange: (e: HistoryEvent) => void) {
    for (const res of fakeResources) this.objects.set(res.resource, new Map());
  }

  /** Creates or replaces an object (ADDED or MODIFIED) with the next resourceVersion. */
  apply(resource: string, obj: KubeObj): KubeObj {
    const spec = this.spec(resource);
    const map = this.objects.get(resource) as Map<string, KubeObj>;
    const key = keyOf(obj);
    const prev = map.get(key);
    this.rv++;
    const stored: KubeObj = structuredClone({
      ...obj,
      apiVersion: spec.group === "" ? spec.version : `${spec.group}/${spec.version}`,
      kind: spec.kind,
      metadata: {
        ...obj.metadata,
        uid: prev?.metadata.uid ?? `uid-${++this.uid}`,
        resourceVersion: String(this.rv),
        creationTimestamp: prev?.metadata.creationTimestamp ?? "2024-05-01T10:00:00Z",
      },
    });
    map.set(key, stored);
    this.record({ rv: this.rv, resource, type: prev ? "MODIFIED" : "ADDED", object: stored });
    return stored;
  }

  /** Deletes an object (DELETED carries its last state at a new resourceVersion). */
  remove(resource: string, namespace: string | undefined, name: string): void {
    const map = this.objects.get(resource) as Map<string, KubeObj>;
    const key = `${namespace ?? ""}/${name}`;
    const prev = map.get(key);
    if (!prev) throw new Error(`fake apiserver: no ${resource} ${key}`);
    map.delete(key);
    this.rv++;
    const object = structuredClone({
      ...prev,
      metadata: { ...prev.metadata, resourceVersion: String(this.rv) },
    });
    this.record({ rv: this.rv, resource, type: "DELETED", object });
  }

  /** Forgets every object of a resource without events, as deleting its CRD deletes them. */
  purge(resource: string): void {
    this.objects.get(resource)?.clear();
    for (let i = this.history.length - 1; i >= 0; i--)
      if (this.history[i]?.resource === resource) this.history.splice(i, 1);
  }

  /** The current objects of a resource, sorted by namespace/name as the API server lists them. */
  list(resource: string): KubeObj[] {
    const map = this.objects.get(resource) as Map<string, KubeObj>;
    return [...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, o]) => o);
  }

  /** Forgets history up to now: a watch from any older resourceVersion gets 410. */
  compact(): void {
    this.compactedRv = this.rv;
    this.history.length = 0;
  }

  spec(resource: string): FakeResource {
    const spec = fakeResources.find((x) => x.resource === resource);
    if (!spec) throw new Error(`fake apiserver: unknown resource ${resource}`);
    return spec;
  }

  private record(e: HistoryEvent): void {
    this.history.push(e);
    this.onChange(e);
  }
}

function keyOf(obj: KubeObj): string {
  return `${obj.metadata.namespace ?? ""}/${obj.metadata.name}`;
}
