/** Kubernetes objects shaped as the API server sends them, for e2e tests. */

let revision = 1000;
/** Like etcd: every write gets a new, larger resourceVersion. */
const nextResourceVersion = () => String(++revision);

export function service(name: string, namespace: string, ports: { name: string; port: number }[]) {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name,
      namespace,
      uid: `uid-svc-${name}`,
      resourceVersion: nextResourceVersion(),
      labels: { app: name },
    },
    spec: {
      type: "ClusterIP",
      clusterIP: "10.96.0.42",
      clusterIPs: ["10.96.0.42"],
      ipFamilies: ["IPv4"],
      ports: ports.map((p) => ({ name: p.name, port: p.port, protocol: "TCP", targetPort: p.port })),
      selector: { app: name },
    },
  };
}

export function endpointSlice(
  name: string,
  serviceName: string,
  namespace: string,
  port: { name: string; port: number },
  endpoints: { ip: string; ready: boolean }[],
) {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name,
      namespace,
      uid: `uid-slice-${name}`,
      resourceVersion: nextResourceVersion(),
      labels: {
        "kubernetes.io/service-name": serviceName,
        "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
      },
      ownerReferences: [
        { apiVersion: "v1", kind: "Service", name: serviceName, uid: `uid-svc-${serviceName}` },
      ],
    },
    addressType: "IPv4",
    endpoints: endpoints.map((e) => ({
      addresses: [e.ip],
      conditions: { ready: e.ready, serving: e.ready, terminating: false },
      nodeName: "node-1",
      zone: "a",
      targetRef: { kind: "Pod", namespace, name: podName(serviceName, e.ip), uid: `uid-pod-${e.ip}` },
    })),
    ports: [{ name: port.name, port: port.port, protocol: "TCP" }],
  };
}

export const event = (type: "ADDED" | "MODIFIED" | "DELETED", object: unknown) => ({ type, object });

/** The pod a slice endpoint of `serviceName` at `ip` names. */
export function podName(serviceName: string, ip: string): string {
  return `${serviceName}-${ip.replace(/[.:]/g, "-")}`;
}

/** A running Pod of `serviceName` at `ip`, as the API server sends it. */
export function pod(serviceName: string, namespace: string, ip: string) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: podName(serviceName, ip),
      namespace,
      uid: `uid-pod-${ip}`,
      resourceVersion: nextResourceVersion(),
      labels: { app: serviceName, version: "v1" },
    },
    spec: {
      serviceAccountName: serviceName,
      nodeName: "node-1",
      containers: [{ name: serviceName, image: "example" }],
    },
    status: {
      phase: "Running",
      podIP: ip,
      podIPs: [{ ip }],
      conditions: [{ type: "Ready", status: "True" }],
    },
  };
}

/** A running Pod of `serviceName` at `ip` labelled `version` (a DestinationRule subset picks it). */
export function versionedPod(serviceName: string, namespace: string, ip: string, version: string) {
  const p = pod(serviceName, namespace, ip);
  return { ...p, metadata: { ...p.metadata, labels: { app: serviceName, version } } };
}
