/**
 * The fake API server's object store: resources, a global resourceVersion, and the event history
 * watches replay. The test API names a resource by its id (FakeResource.id).
 */

/** One resource the fake serves. */
export interface FakeResource {
  /**
   * How the test API names it: its resource, or `<resource>.<group>` where two groups serve one name
   * (`gateways` is Istio's, `gateways.gateway.networking.k8s.io` the Gateway API's).
   */
  id: string;
  resource: string;
  kind: string;
  group: string;
  /** The version built-in resources are served at, and the version objects are stored at. */
  version: string;
  namespaced: boolean;
  /** A CRD (the Istio and Gateway API kinds): served only while installed, at the versions installed (fake-crds.ts). */
  crd?: boolean;
  /** A CRD's versions as its project defines them: installing it at others serves none of those. */
  crdVersions?: readonly string[];
  /** metadata.generation kept as the API server keeps it for a kind with a status subresource (1, then +1 per spec change). */
  generation?: boolean;
}

const gatewayApi = "gateway.networking.k8s.io";

const r = (
  resource: string,
  kind: string,
  group: string,
  namespaced: boolean,
  crdVersions?: readonly string[],
  id = resource,
): FakeResource => ({
  id,
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
  // The Gateway API CRDs at the versions of its 1.5 release (ReferenceGrant: v1 and v1beta1); the
  // kinds whose status edgepilot writes keep metadata.generation as the API server does.
  { ...r("gatewayclasses", "GatewayClass", gatewayApi, false, ["v1", "v1beta1"]), generation: true },
  {
    ...r("gateways", "Gateway", gatewayApi, true, ["v1", "v1beta1"], `gateways.${gatewayApi}`),
    generation: true,
  },
  { ...r("httproutes", "HTTPRoute", gatewayApi, true, ["v1", "v1beta1"]), generation: true },
  { ...r("grpcroutes", "GRPCRoute", gatewayApi, true, ["v1"]), generation: true },
  r("referencegrants", "ReferenceGrant", gatewayApi, true, ["v1", "v1beta1"]),
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
    for (const res of fakeResources) this.objects.set(res.id, new Map());
  }

  /** Creates or replaces an object (ADDED or MODIFIED) with the next resourceVersion. */
  apply(resource: string, obj: KubeObj): KubeObj {
    const spec = this.spec(resource);
    const map = this.objects.get(resource) as Map<string, KubeObj>;
    const key = keyOf(obj);
    const prev = map.get(key);
    this.rv++;
    const generation = spec.generation ? { generation: nextGeneration(prev, obj) } : {};
    // With a status subresource the main resource never writes status: created without, kept on update.
    const { status: _ignored, ...withoutStatus } = obj;
    const body = spec.generation
      ? { ...withoutStatus, ...(prev?.status !== undefined && { status: prev.status }) }
      : obj;
    const stored: KubeObj = structuredClone({
      ...body,
      apiVersion: spec.group === "" ? spec.version : `${spec.group}/${spec.version}`,
      kind: spec.kind,
      metadata: {
        ...obj.metadata,
        ...generation,
        uid: prev?.metadata.uid ?? `uid-${++this.uid}`,
        resourceVersion: String(this.rv),
        creationTimestamp: prev?.metadata.creationTimestamp ?? "2024-05-01T10:00:00Z",
      },
    });
    map.set(key, stored);
    this.record({ rv: this.rv, resource, type: prev ? "MODIFIED" : "ADDED", object: stored });
    return stored;
  }

  /** The object stored under namespace/name, if any. */
  get(resource: string, namespace: string | undefined, name: string): KubeObj | undefined {
    return this.objects.get(resource)?.get(`${namespace ?? ""}/${name}`);
  }

  /**
   * A PUT to the object's status subresource as the API server answers it: only `.status` is
   * taken from `body`, the resourceVersion moves on, generation and everything else stay; a body
   * naming another resourceVersion than the stored one is a 409, an unknown object a 404.
   */
  putStatus(
    resource: string,
    namespace: string | undefined,
    name: string,
    body: KubeObj,
  ): { code: 200; object: KubeObj } | { code: 404 | 409 | 400; reason: string; message: string } {
    const map = this.objects.get(resource) as Map<string, KubeObj>;
    const key = `${namespace ?? ""}/${name}`;
    const prev = map.get(key);
    const what = `${resource} "${name}"`;
    if (!prev) return { code: 404, reason: "NotFound", message: `${what} not found` };
    if (body.metadata?.name !== name || (body.metadata.namespace ?? undefined) !== namespace)
      return {
        code: 400,
        reason: "BadRequest",
        message: "the name of the object does not match the name on the URL",
      };
    const sent = body.metadata.resourceVersion;
    if (sent !== undefined && sent !== "" && sent !== prev.metadata.resourceVersion)
      return {
        code: 409,
        reason: "Conflict",
        message: `Operation cannot be fulfilled on ${what}: the object has been modified; please apply your changes to the latest version and try again`,
      };
    this.rv++;
    const { status: _old, ...rest } = prev;
    const object: KubeObj = structuredClone({
      ...rest,
      ...(body.status !== undefined && { status: body.status }),
      metadata: { ...prev.metadata, resourceVersion: String(this.rv) },
    });
    map.set(key, object);
    this.record({ rv: this.rv, resource, type: "MODIFIED", object });
    return { code: 200, object };
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
    const spec = fakeResources.find((x) => x.id === resource);
    if (!spec) throw new Error(`fake apiserver: unknown resource ${resource}`);
    return spec;
  }

  private record(e: HistoryEvent): void {
    this.history.push(e);
    this.onChange(e);
  }
}

/** 1 for a new object; the previous generation, plus one when the spec changed. */
function nextGeneration(prev: KubeObj | undefined, obj: KubeObj): number {
  const before = prev?.metadata.generation;
  if (prev === undefined || typeof before !== "number") return 1;
  return JSON.stringify(prev.spec) === JSON.stringify(obj.spec) ? before : before + 1;
}

function keyOf(obj: KubeObj): string {
  return `${obj.metadata.namespace ?? ""}/${obj.metadata.name}`;
}
