/** Kubernetes watch events as ingest accepts them, after validation. */

export const eventTypes = ["ADDED", "MODIFIED", "DELETED", "BOOKMARK"] as const;
export type EventType = (typeof eventTypes)[number];

/** The kinds ingest knows, with their apiVersion and whether they live in a namespace. */
export const knownKinds = {
  Service: { apiVersion: "v1", namespaced: true },
  Endpoints: { apiVersion: "v1", namespaced: true },
  Pod: { apiVersion: "v1", namespaced: true },
  Node: { apiVersion: "v1", namespaced: false },
  Namespace: { apiVersion: "v1", namespaced: false },
  EndpointSlice: { apiVersion: "discovery.k8s.io/v1", namespaced: true },
} as const;
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
