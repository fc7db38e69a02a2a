/** Kubernetes objects as the API server sends them, with etcd-like increasing resourceVersions. */

let revision = 5000;
/** The next resourceVersion, as etcd would assign it. */
export const rv = () => String(++revision);

export const ev = (type: "ADDED" | "MODIFIED" | "DELETED", object: unknown) => ({ type, object });

export function service(
  name: string,
  ns: string,
  o: { headless?: boolean; publishNotReady?: boolean; port?: number } = {},
) {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: ns, uid: `svc-${ns}-${name}`, resourceVersion: rv(), labels: { app: name } },
    spec: {
      type: "ClusterIP",
      clusterIP: o.headless ? "None" : "10.96.4.2",
      clusterIPs: [o.headless ? "None" : "10.96.4.2"],
      ports: [{ name: "grpc", port: o.port ?? 9080, protocol: "TCP", targetPort: 9080 }],
      selector: { app: name },
      ...(o.publishNotReady && { publishNotReadyAddresses: true }),
    },
  };
}

export interface SliceEndpointSpec {
  ip: string;
  pod?: string;
  node?: string;
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
}

export function slice(
  name: string,
  svc: string,
  ns: string,
  endpoints: SliceEndpointSpec[],
  resourceVersion = rv(),
) {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name,
      namespace: ns,
      uid: `slice-${ns}-${name}`,
      resourceVersion,
      generateName: `${svc}-`,
      labels: {
        "kubernetes.io/service-name": svc,
        "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
      },
    },
    addressType: "IPv4",
    endpoints: endpoints.map((e) => ({
      addresses: [e.ip],
      conditions: {
        ready: e.ready ?? true,
        serving: e.serving ?? e.ready ?? true,
        terminating: e.terminating ?? false,
      },
      ...(e.node && { nodeName: e.node }),
      ...(e.pod && { targetRef: { kind: "Pod", namespace: ns, name: e.pod, uid: `pod-${ns}-${e.pod}` } }),
    })),
    ports: [{ name: "grpc", port: 9080, protocol: "TCP" }],
  };
}

export function pod(
  name: string,
  ns: string,
  ip: string,
  o: { node?: string; sa?: string; labels?: Record<string, string> } = {},
) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace: ns,
      uid: `pod-${ns}-${name}`,
      resourceVersion: rv(),
      labels: { app: "x", ...o.labels },
    },
    spec: {
      serviceAccountName: o.sa ?? "default",
      nodeName: o.node ?? "node-a",
      containers: [{ name: "app", image: "app:1" }],
    },
    status: { phase: "Running", podIP: ip, podIPs: [{ ip }] },
  };
}

export function node(name: string, region: string, zone: string) {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      uid: `node-${name}`,
      resourceVersion: rv(),
      labels: {
        "kubernetes.io/hostname": name,
        "topology.kubernetes.io/region": region,
        "topology.kubernetes.io/zone": zone,
      },
    },
  };
}

export function namespace(name: string, labels: Record<string, string>) {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name, uid: `ns-${name}`, resourceVersion: rv(), labels },
  };
}
