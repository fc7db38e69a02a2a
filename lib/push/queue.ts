/** The push queue: PushRequests stored under push/pending/, deleted only after their push is written. */
import type { PushRequest } from "../model/index.ts";
import { keys, listAll, type Store } from "../store/index.ts";

/** A queued request and when it arrived (ms since epoch). */
export interface QueuedPush {
  request: PushRequest;
  at: number;
}

/** A queued request with its store key. */
export interface QueueItem extends QueuedPush {
  key: string;
}

/** Appends a request; keys sort by arrival, and a random id keeps concurrent writers apart. */
export async function enqueuePush(store: Store, request: PushRequest, now: number): Promise<string> {
  const key = keys.pending(now, crypto.randomUUID());
  const result = await store.put<QueuedPush>(key, { request, at: now }, { ifVersion: 0 });
  if (!result.ok) throw new Error(`push queue: key collision on ${key}`);
  return key;
}

/** Every queued request, oldest first. */
export async function readQueue(store: Store): Promise<QueueItem[]> {
  const entries = await listAll<QueuedPush>(store, keys.pendingPrefix());
  return entries.map((e) => ({ key: e.key, request: e.value.request, at: e.value.at }));
}
