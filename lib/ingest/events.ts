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
  /**
   * Once validated, the id of its kind (lib/kinds/descriptors.ts; lib/ingest/validate.ts kindIdOf):
   * the kind it was sent with, but `KubernetesGateway` for a Gateway API Gateway, so every handler,
   * record and count tells the two Gateways apart by group.
   */
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

/**
 * A validated event. BOOKMARKs carry no usable object. REJECTED is an ADDED or MODIFIED event whose
 * envelope and metadata are sound but whose object edgepilot refuses (its kind's rules): it is a
 * fact about the cluster, so it is skipped and reported, in its place in the batch, and the rest applies.
 */
export type WatchEvent =
  | { type: "ADDED" | "MODIFIED"; object: KubeObject }
  /**
   * `unreadBody`: the deleted object's last state fails its kind's rules, so only its identity is
   * used: its handler undoes it from what ingest recorded, as a resync does for an object gone.
   */
  | { type: "DELETED"; object: KubeObject; unreadBody?: true }
  | { type: "BOOKMARK"; resourceVersion: string | undefined }
  | RejectedEvent;

/** An object refused by its kind's rules: `field` is the path inside the object (e.g. `spec.hosts[0]`). */
export interface RejectedEvent {
  type: "REJECTED";
  object: KubeObject;
  field: string;
  message: string;
}
