/** What a push changed and how it is announced: the push side writes these, the read side takes them. */
import type { PushContext } from "./push-context.ts";
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
 * A push as the change feed carries it: plain fields, the same object to every reader (never
 * mutated or copied per reader). `changes` lists every resource it changed (each upsert with its
 * version and encoded bytes, so a reader answers without reading the store); absent means "unknown"
 * (a recovered flush, the sync gate opening, a push log entry that cannot name them): readers re-read
 * everything they serve.
 */
export interface Push {
  /** The push version (keys.pushVersion()); 0 for the sync gate opening. */
  readonly version: number;
  readonly changes?: readonly ResourceChange[];
  /**
   * A Full push whose Envoy sidecar resources may have changed beyond `changes` (lib/push/push-refresh.ts):
   * sidecar snapshots go stale and Poll/Watch calls of a sidecar wake.
   */
  readonly refresh?: true;
  /** The push context the flush of this push built, when it ran in this process (else readers load it). */
  readonly context?: PushContext;
}

/** Takes each push, in announcement order. */
export type PushListener = (push: Push) => void;

export interface PushSignal {
  /** Listens for pushes; returns the function that stops listening (no push reaches it after). */
  subscribe(listener: PushListener): () => void;
  /**
   * Announces a push; a listener that throws does not stop the others. Every listener gets the
   * pushes in the order they were announced; the first slice of listeners is told before emit
   * returns, the rest after yields.
   */
  emit(push: Push): void;
  /** How many listeners are attached (open streams). */
  readonly size: number;
}

/**
 * Pushes told as one (a busy stream or signal gathers those announced meanwhile): the last one's
 * version and context, every change in order (unknown when one is unknown or past `maxChanges`), a
 * refresh when one was. One push is returned as it is: the same object every other reader holds.
 */
export function gatherPushes(pushes: readonly Push[], maxChanges: number): Push {
  if (pushes.length === 1) return pushes[0] as Push;
  const last = pushes.at(-1) as Push;
  let changes: ResourceChange[] | undefined = [];
  let refresh = false;
  for (const p of pushes) {
    refresh ||= p.refresh === true;
    if (changes === undefined) continue;
    if (p.changes === undefined || changes.length + p.changes.length > maxChanges) changes = undefined;
    else for (const c of p.changes) changes.push(c);
  }
  return {
    version: last.version,
    ...(changes && { changes }),
    ...(refresh && { refresh: true as const }),
    ...(last.context && { context: last.context }),
  };
}
