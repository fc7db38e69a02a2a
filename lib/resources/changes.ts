/** What a push changed and how it is announced: the push side writes these, the read side takes them. */
import type { TypeUrl } from "./xds-types.ts";

/**
 * One published change: a new version, or null for a removal. An upsert from flush() also carries
 * the published resource's encoded `body` and `service` (it is the very StoredResource the store
 * keeps, shared, never copied: read-only for every holder), so a
 * stream answers a push from the change feed without reading the store; past
 * the push's first maxFeedBodyBytes, upserts carry their version only (streams read those).
 * Push-log entries leave them out (names and versions only).
 */
export interface ResourceChange {
  typeUrl: TypeUrl;
  name: string;
  version: string | null;
  /** The encoded resource (StoredResource.body) of an upsert; absent for a removal. */
  body?: Uint8Array;
  /** StoredResource.service of an upsert; absent for a removal. */
  service?: string;
  /**
   * Set on a change that concerns one namespace's view only (lib/push/views.ts): an overlay
   * resource of that view, or, with `name` "", a change of what the view may see (`*`: every
   * namespace's view). Streams of other views never see it (lib/xds/view-source.ts).
   */
  view?: string;
}

/** The push counter under keys.pushVersion(). */
export interface PushVersion {
  version: number;
  at: number;
}

/**
 * A push: its version and, when known, every resource it changed (the flush's `changes`, each
 * upsert with its version and encoded bytes, so a listener answers without reading the store).
 * The same change objects reach every listener: they must never be mutated or copied per listener.
 * `changes` absent means "unknown" (a recovered flush, the sync gate opening): listeners must
 * re-read everything they serve.
 */
export type PushListener = (version: number, changes?: readonly ResourceChange[]) => void;

export interface PushSignal {
  /** Listens for pushes; returns the function that stops listening (no push reaches it after). */
  subscribe(listener: PushListener): () => void;
  /**
   * Announces a push (with what it changed when known); a listener that throws does not stop the
   * others. Every listener gets the pushes in the order they were announced; the first slice of
   * listeners is told before emit returns, the rest after yields.
   */
  emit(version: number, changes?: readonly ResourceChange[]): void;
  /** How many listeners are attached (open streams). */
  readonly size: number;
}
