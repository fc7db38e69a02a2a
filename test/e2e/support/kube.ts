/** Kubernetes objects shaped as the API server sends them, for e2e tests. */

export function service(name: string, namespace: string, ports: { name: string; port: number }[]) {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace, uid: `uid-svc-${name}`, resourceVersion: "100", labels: { app: name } },
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
      resourceVersion: "200",
      labels: {
        "kubernetes.io/service-name": serviceName,
        "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
      },
      ownerReferences: [
        { apiVersion: "v1", kind: "Service", name: serviceName, uid: `uid-svc-${serviceName}` },
      ],
    },
    addressType: "IPv4",
    endpoints: endpoints.map((e, i) => ({
      addresses: [e.ip],
      conditions: { ready: e.ready, serving: e.ready, terminating: false },
      nodeName: "node-1",
      zone: "a",
      targetRef: { kind: "Pod", namespace, name: `${serviceName}-${i}`, uid: `uid-pod-${e.ip}` },
    })),
    ports: [{ name: port.name, port: port.port, protocol: "TCP" }],
  };
}

export const event = (type: "ADDED" | "MODIFIED" | "DELETED", object: unknown) => ({ type, object });
