/** Kubernetes watch events as ingest accepts them, after validation. */

export const eventTypes = ["ADDED", "MODIFIED", "DELETED", "BOOKMARK"] as const;
export type EventType = (typeof eventTypes)[number];

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
