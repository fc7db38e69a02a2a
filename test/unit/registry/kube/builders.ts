/** Builders for Kubernetes objects, starting from the API-server-shaped fixtures. */
import type {
  EndpointSlice,
  KubeService,
  KubeServiceSpec,
  NamespacedObjectMeta,
  SliceEndpoint,
} from "../../../../lib/registry/kube/types.ts";
import { loadKubeFixture } from "../../../fixtures/kube/load.ts";

/** The ClusterIP fixture with `spec` and `metadata` fields replaced by the overrides. */
export function service(
  spec: Partial<KubeServiceSpec> = {},
  metadata: Partial<NamespacedObjectMeta> = {},
): KubeService {
  const base = loadKubeFixture<KubeService>("service-clusterip.json");
  return { ...base, metadata: { ...base.metadata, ...metadata }, spec: { ...base.spec, ...spec } };
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
