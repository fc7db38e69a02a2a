/** Kubernetes watch events as ingest accepts them, after validation. */

export const eventTypes = ["ADDED", "MODIFIED", "DELETED", "BOOKMARK"] as const;
export type EventType = (typeof eventTypes)[number];

/** The kinds ingest knows, with the apiVersions they are served at and whether they live in a namespace. */
export const knownKinds = {
  Service: { apiVersions: ["v1"], namespaced: true },
  Endpoints: { apiVersions: ["v1"], namespaced: true },
  Pod: { apiVersions: ["v1"], namespaced: true },
  Node: { apiVersions: ["v1"], namespaced: false },
  Namespace: { apiVersions: ["v1"], namespaced: false },
  EndpointSlice: { apiVersions: ["discovery.k8s.io/v1"], namespaced: true },
  // Istio networking kinds: validated as istiod's webhook does; VirtualService and DestinationRule
  // are converted, the others are reported as ignored until converted.
  VirtualService: { apiVersions: istioVersions(), namespaced: true },
  DestinationRule: { apiVersions: istioVersions(), namespaced: true },
  ServiceEntry: { apiVersions: istioVersions(), namespaced: true },
  WorkloadEntry: { apiVersions: istioVersions(), namespaced: true },
  Sidecar: { apiVersions: istioVersions(), namespaced: true },
  Gateway: { apiVersions: istioVersions(), namespaced: true },
} as const;

function istioVersions() {
  return ["networking.istio.io/v1", "networking.istio.io/v1beta1", "networking.istio.io/v1alpha3"] as const;
}
export type KnownKind = keyof typeof knownKinds;

/** An object's metadata as far as ingest relies on it. */
export interface ObjectMeta {
  name: string;
  namespace?: string;
  resourceVersion?: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface KubeObject {
  apiVersion?: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/** A validated event. BOOKMARKs carry no usable object. */
export type WatchEvent =
  | { type: "ADDED" | "MODIFIED" | "DELETED"; object: KubeObject }
  | { type: "BOOKMARK"; resourceVersion: string | undefined };
