/**
 * The read paths' view of start-up sync (lib/push/sync-state.ts decides): until `synced()` is
 * true, no proxy is told to remove a resource it holds. A small port, so Node answers from memory
 * (no store read per stream per push) and the Worker reads the record from its store.
 */
export interface SyncGate {
  /** True once proxies may be told to remove what they hold. */
  synced(): boolean | Promise<boolean>;
}

/** A gate that is always open: for tests and callers that do not track sync. */
export const openGate: SyncGate = { synced: () => true };

/** What a stateless read path answers a client that holds something while the registry is not synced. */
export const notSyncedMessage =
  "the registry is not synced since this control plane started (PILOT_SYNC_TIMEOUT); keep what you hold and retry";

/** One cluster's sync as /ready and StatusService show it. */
export interface ClusterSyncState {
  cluster: string;
  services: boolean;
  /** The resync of the endpoint kind in use has arrived. */
  endpoints: boolean;
  synced: boolean;
  /** A Pod resync has arrived: endpoints waiting for their pod are no longer held (held-pods.ts). */
  pods: boolean;
  /** Watched kinds whose resync has not arrived yet (only when the relay named what it watches). */
  waitingFor?: string[];
}

/** The decision, plain data: what /ready and StatusService show and what the read paths obey. */
export interface SyncState {
  /** Every cluster heard from is synced (or the timeout passed): what proxies hold may be judged. */
  synced: boolean;
  /** Synced and published since (the gate the read paths obey): proxies may be told to remove what they hold. */
  published: boolean;
  /** PILOT_SYNC_TIMEOUT has passed since the record began. */
  timedOut: boolean;
  /** When the timeout passes (ms since epoch). */
  timeoutAt: number;
  /** The instance id of this state's lifetime. */
  instance: string;
  /** Sorted by cluster id. */
  clusters: ClusterSyncState[];
}
