/** Builders for Kubernetes objects (from the API-server-shaped fixtures) and registry records. */
import type { Service } from "../../../../lib/model/index.ts";
import type { NodeInfo, PodInfo, RawEndpoint } from "../../../../lib/registry/kube/records.ts";
import type {
  EndpointSlice,
  EndpointSubset,
  KubeEndpoints,
  KubeNode,
  KubePod,
  KubeService,
  KubeServiceSpec,
  NamespacedObjectMeta,
  ObjectMeta,
  SliceEndpoint,
} from "../../../../lib/registry/kube/types.ts";
import { loadKubeFixture } from "../../../fixtures/kube/load.ts";

/** The ClusterIP fixture with `spec` and `metadata` fields replaced by the overrides. */
export function service(
  spec: Partial<KubeServiceSpec> = {},
  metadata: Partial<NamespacedObjectMeta> = {},
  status?: KubeService["status"],
): KubeService {
  const base = loadKubeFixture<KubeService>("service-clusterip.json");
  return {
    ...base,
    metadata: { ...base.metadata, ...metadata },
    spec: { ...base.spec, ...spec },
    ...(status !== undefined && { status }),
  };
}

/** The IPv4 fixture slice with top-level fields replaced by the overrides. */
export function slice(
  overrides: Partial<Omit<EndpointSlice, "metadata">> = {},
  metadata: Partial<NamespacedObjectMeta> = {},
): EndpointSlice {
  const base = loadKubeFixture<EndpointSlice>("endpointslice-ipv4.json");
  return { ...base, ...overrides, metadata: { ...base.metadata, ...metadata } };
}

/** A ready slice endpoint on one address; override anything. */
export function sliceEndpoint(overrides: Partial<SliceEndpoint> = {}): SliceEndpoint {
  return {
    addresses: ["10.244.0.5"],
    conditions: { ready: true, serving: true, terminating: false },
    nodeName: "worker-a",
    zone: "zone-a",
    ...overrides,
  };
}

/** The v1 Endpoints fixture; subsets replaced when given, left out entirely when null. */
export function endpointsObject(subsets?: EndpointSubset[] | null): KubeEndpoints {
  const { subsets: fixtureSubsets, ...rest } = loadKubeFixture<KubeEndpoints>("endpoints-v1.json");
  if (subsets === null) return rest;
  return { ...rest, subsets: subsets ?? fixtureSubsets ?? [] };
}

/** The Pod fixture with metadata, spec and status fields replaced by the overrides. */
export function kubePod(
  o: { metadata?: Partial<NamespacedObjectMeta>; spec?: KubePod["spec"]; status?: KubePod["status"] } = {},
): KubePod {
  const base = loadKubeFixture<KubePod>("pod.json");
  return {
    ...base,
    metadata: { ...base.metadata, ...o.metadata },
    spec: { ...base.spec, ...o.spec },
    status: { ...base.status, ...o.status },
  };
}

/** The Node fixture with its labels replaced when given. */
export function kubeNode(labels?: Record<string, string>, metadata: Partial<ObjectMeta> = {}): KubeNode {
  const base = loadKubeFixture<KubeNode>("node.json");
  return { ...base, metadata: { ...base.metadata, ...(labels && { labels }), ...metadata } };
}

/** A ready raw endpoint of a pod on worker-a; override anything. */
export function raw(o: Partial<RawEndpoint> = {}): RawEndpoint {
  return {
    address: "10.244.1.12",
    port: 9080,
    servicePortName: "grpc",
    conditions: { ready: true, serving: true, terminating: false },
    nodeName: "worker-a",
    zone: "us-east-1a",
    zoneHints: [],
    pod: { namespace: "bookinfo", name: "reviews-v1" },
    ...o,
  };
}

/** The pod raw() names; override anything. */
export function podInfo(o: Partial<PodInfo> = {}): PodInfo {
  return {
    namespace: "bookinfo",
    name: "reviews-v1",
    ips: ["10.244.1.12"],
    labels: { app: "reviews", version: "v1" },
    serviceAccount: "bookinfo-reviews",
    nodeName: "worker-a",
    terminating: false,
    ...o,
  };
}

/** worker-a with a full locality; override anything. */
export function nodeInfo(o: Partial<NodeInfo> = {}): NodeInfo {
  return { name: "worker-a", region: "us-east-1", zone: "us-east-1a", subzone: "rack-7", ...o };
}

/** A model Service as this cluster recorded it; override anything. */
export function modelService(o: Partial<Service> = {}): Service {
  return {
    hostname: "reviews.bookinfo.svc.cluster.local",
    name: "reviews",
    namespace: "bookinfo",
    clusterId: "east",
    resolution: "ClientSideLB",
    addresses: ["10.96.142.17"],
    ports: [{ name: "grpc", port: 9080, protocol: "GRPC" }],
    labels: {},
    ...o,
  };
}
