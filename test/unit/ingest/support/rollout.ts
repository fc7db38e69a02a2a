/**
 * A small Kubernetes simulator for one Deployment behind one Service: it keeps the objects an
 * API server would hold and records the watch events it would send, with etcd-like
 * resourceVersions. Enough to replay a rolling update the way the endpointslice controller does it.
 */

type Obj = Record<string, unknown> & { metadata: Record<string, unknown> };

export interface SimEvent {
  type: "ADDED" | "MODIFIED" | "DELETED";
  object: Obj;
}

interface SliceEndpoint {
  ip: string;
  pod: string;
  node: string;
  ready: boolean;
  terminating: boolean;
}

export function createCluster(ns: string, app: string, nodes: { name: string; zone: string }[]) {
  let revision = 10_000;
  const events: SimEvent[] = [];
  const pods = new Map<string, Obj>();
  const slices = new Map<string, SliceEndpoint[]>();
  const sliceObjects = new Map<string, Obj>();
  let nextIp = 1;

  const emit = (type: SimEvent["type"], object: Obj) => {
    object.metadata.resourceVersion = String(++revision);
    events.push({ type, object: structuredClone(object) });
  };

  for (const n of nodes) {
    emit("ADDED", {
      apiVersion: "v1",
      kind: "Node",
      metadata: {
        name: n.name,
        labels: { "topology.kubernetes.io/region": "eu-west1", "topology.kubernetes.io/zone": n.zone },
      },
    });
  }
  emit("ADDED", {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: app, namespace: ns, labels: { app } },
    spec: {
      clusterIP: "10.96.7.7",
      clusterIPs: ["10.96.7.7"],
      ports: [{ name: "grpc", port: 9080, protocol: "TCP" }],
      selector: { app },
    },
  });

  const writeSlice = (name: string, type: "ADDED" | "MODIFIED") => {
    const eps = slices.get(name) ?? [];
    const obj: Obj = {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name, namespace: ns, labels: { "kubernetes.io/service-name": app } },
      addressType: "IPv4",
      endpoints: eps.map((e) => ({
        addresses: [e.ip],
        conditions: { ready: e.ready, serving: e.ready || e.terminating, terminating: e.terminating },
        nodeName: e.node,
        targetRef: { kind: "Pod", namespace: ns, name: e.pod },
      })),
      ports: [{ name: "grpc", port: 9080, protocol: "TCP" }],
    };
    sliceObjects.set(name, obj);
    emit(type, obj);
  };

  return {
    events,
    /** A new pod: ADDED without an IP, then scheduled and running, then listed in a slice (not ready, then ready). */
    startPod(name: string, version: string, slice: string, nodeIndex: number) {
      const node = nodes[nodeIndex % nodes.length] as { name: string };
      const ip = `10.244.${Math.floor(nextIp / 250)}.${(nextIp++ % 250) + 1}`;
      const pod: Obj = {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name, namespace: ns, labels: { app, version } },
        spec: { serviceAccountName: app, nodeName: node.name },
        status: { phase: "Pending" },
      };
      pods.set(name, pod);
      emit("ADDED", pod);
      pod.status = { phase: "Running", podIP: ip, podIPs: [{ ip }] };
      emit("MODIFIED", pod);
      const isNew = !slices.has(slice);
      slices.set(slice, [
        ...(slices.get(slice) ?? []),
        { ip, pod: name, node: node.name, ready: false, terminating: false },
      ]);
      writeSlice(slice, isNew ? "ADDED" : "MODIFIED");
      return ip;
    },
    /** The pod's readiness probe passes: the slice marks it ready. */
    ready(name: string) {
      for (const [slice, eps] of slices) {
        const e = eps.find((x) => x.pod === name);
        if (e) {
          e.ready = true;
          writeSlice(slice, "MODIFIED");
        }
      }
    },
    /** The pod's readiness probe fails: the slices listing it mark it not ready. */
    unready(name: string) {
      for (const [slice, eps] of slices) {
        const e = eps.find((x) => x.pod === name);
        if (e) {
          e.ready = false;
          writeSlice(slice, "MODIFIED");
        }
      }
    },
    /** The IP a pod got. */
    ipOf(name: string): string {
      return (pods.get(name) as unknown as { status: { podIP: string } }).status.podIP;
    },
    /** Graceful deletion: terminating in its slice, then gone from the slice, then the pod DELETED. */
    stopPod(name: string) {
      const pod = pods.get(name) as Obj;
      pod.metadata.deletionTimestamp = "2026-11-21T10:00:00Z";
      emit("MODIFIED", pod);
      for (const [slice, eps] of slices) {
        const e = eps.find((x) => x.pod === name);
        if (!e) continue;
        e.ready = false;
        e.terminating = true;
        writeSlice(slice, "MODIFIED");
        slices.set(
          slice,
          eps.filter((x) => x.pod !== name),
        );
        writeSlice(slice, "MODIFIED");
      }
      pods.delete(name);
      emit("DELETED", pod);
    },
    /** The controller deletes a slice (e.g. after compacting endpoints into the others). */
    deleteSlice(name: string) {
      const obj = sliceObjects.get(name) as Obj;
      slices.delete(name);
      sliceObjects.delete(name);
      emit("DELETED", obj);
    },
    /** Moves every endpoint of `from` into `to`, as the controller's compaction would. */
    mergeSlices(from: string, to: string) {
      slices.set(to, [...(slices.get(to) ?? []), ...(slices.get(from) ?? [])]);
      slices.set(from, []);
      writeSlice(to, "MODIFIED");
    },
    /** The current EndpointSlices and Pods, as a list call would return them. */
    list(kind: "EndpointSlice" | "Pod") {
      const items = kind === "Pod" ? [...pods.values()] : [...sliceObjects.values()];
      return { resourceVersion: String(revision), items: structuredClone(items) };
    },
    /** What a proxy should be served now: every ready endpoint of every slice, by address, with its zone. */
    expected() {
      const zoneOf = new Map(nodes.map((n) => [n.name, n.zone]));
      return [...slices.values()]
        .flat()
        .filter((e) => e.ready)
        .map((e) => ({ address: e.ip, health: "HEALTHY", locality: `eu-west1/${zoneOf.get(e.node)}/` }))
        .sort((a, b) => (a.address < b.address ? -1 : 1));
    },
  };
}
