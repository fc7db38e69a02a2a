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
