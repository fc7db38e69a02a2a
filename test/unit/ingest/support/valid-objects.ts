/**
 * One valid object of every kind ingest converts, as the API server would send it, and a way to
 * override any field by path: `service({ "spec.clusterIP": "None" })`, `slice({ [DROP]: ... })`.
 */

/** An override value that removes the field instead of setting it. */
export const DROP = Symbol("drop");

/** Overrides by path: "a.b[0].c" or, for keys with dots or slashes, an array of segments joined by "\u0000". */
export type Overrides = Record<string, unknown>;

/** A path whose segments may hold "." or "/": label and annotation keys. */
export const at = (...segments: (string | number)[]): string => segments.join("\u0000");

function segments(path: string): (string | number)[] {
  if (path.includes("\u0000")) return path.split("\u0000").map((s) => (/^\d+$/.test(s) ? Number(s) : s));
  return path
    .replace(/\[(\d+)\]/g, ".$1")
    .split(".")
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

/** A deep copy of `base` with each override applied in order. */
export function withOverrides<T>(base: T, overrides: Overrides = {}): T {
  const out = structuredClone(base) as Record<string | number, unknown>;
  for (const [path, value] of Object.entries(overrides)) {
    const segs = segments(path);
    let node = out as Record<string | number, unknown>;
    for (const s of segs.slice(0, -1)) {
      if (typeof node[s] !== "object" || node[s] === null) node[s] = {};
      node = node[s] as Record<string | number, unknown>;
    }
    const last = segs[segs.length - 1] as string | number;
    if (value === DROP) delete node[last];
    else node[last] = value;
  }
  return out as T;
}

const meta = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  namespace: "bookinfo",
  uid: `uid-${name}`,
  resourceVersion: "100",
  labels: { app: "reviews" },
  ...extra,
});

export const service = (o?: Overrides) =>
  withOverrides(
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: meta("reviews", { annotations: { "networking.istio.io/exportTo": "." } }),
      spec: {
        type: "ClusterIP",
        clusterIP: "10.96.0.10",
        clusterIPs: ["10.96.0.10"],
        ipFamilies: ["IPv4"],
        ports: [
          { name: "grpc", port: 9080, protocol: "TCP", targetPort: 9080 },
          { name: "http-web", port: 8080, protocol: "TCP", targetPort: "http", appProtocol: "http" },
        ],
        selector: { app: "reviews" },
      },
    },
    o,
  );

export const slice = (o?: Overrides) =>
  withOverrides(
    {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: meta("reviews-8x7kq", {
        labels: {
          "kubernetes.io/service-name": "reviews",
          "endpointslice.kubernetes.io/managed-by": "x.k8s.io",
        },
      }),
      addressType: "IPv4",
      endpoints: [
        {
          addresses: ["10.244.1.12"],
          conditions: { ready: true, serving: true, terminating: false },
          hostname: "reviews-0",
          nodeName: "worker-a",
          zone: "us-east-1a",
          targetRef: { kind: "Pod", name: "reviews-v1-7d9f8c6b5-x2k4p", namespace: "bookinfo", uid: "p" },
          hints: { forZones: [{ name: "us-east-1a" }] },
        },
      ],
      ports: [{ name: "grpc", port: 9080, protocol: "TCP", appProtocol: "kubernetes.io/h2c" }],
    },
    o,
  );

export const endpoints = (o?: Overrides) =>
  withOverrides(
    {
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: meta("reviews"),
      subsets: [
        {
          addresses: [
            { ip: "10.244.1.12", nodeName: "worker-a", targetRef: { kind: "Pod", name: "reviews-v1" } },
          ],
          notReadyAddresses: [{ ip: "10.244.2.7", hostname: "reviews-1" }],
          ports: [
            { name: "grpc", port: 9080, protocol: "TCP" },
            { name: "web", port: 8080, protocol: "TCP" },
          ],
        },
      ],
    },
    o,
  );

export const pod = (o?: Overrides) =>
  withOverrides(
    {
      apiVersion: "v1",
      kind: "Pod",
      metadata: meta("reviews-v1-7d9f8c6b5-x2k4p"),
      spec: {
        nodeName: "worker-a",
        serviceAccountName: "bookinfo-reviews",
        serviceAccount: "bookinfo-reviews",
      },
      status: {
        phase: "Running",
        podIP: "10.244.1.12",
        podIPs: [{ ip: "10.244.1.12" }, { ip: "fd00:10:244:1::c" }],
      },
    },
    o,
  );

export const node = (o?: Overrides) =>
  withOverrides(
    {
      apiVersion: "v1",
      kind: "Node",
      metadata: {
        name: "ip-10-0-1-12.ec2.internal",
        labels: { "topology.kubernetes.io/zone": "us-east-1a" },
      },
    },
    o,
  );

export const namespace = (o?: Overrides) =>
  withOverrides(
    {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "bookinfo", labels: { "istio-injection": "enabled" } },
    },
    o,
  );

/** A watch event around an object. */
export const added = (object: unknown) => ({ type: "ADDED", object });
