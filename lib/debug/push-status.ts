/**
 * /debug/push_status: the recent pushes from the push log (keys.pushLog()), newest first: why
 * (reasons counted as istiod's ReasonStats), which configs, how long after the first event it was
 * published, and what it changed, or that it was a refresh (Envoy sidecar resources rebuilt, which
 * the changed resources do not list). Bounded: at most `limit` pushes, each listing at most
 * maxListedResources of its changed resources (all are counted).
 */
import type { PushLogEntry } from "../push/flush.ts";
import type { PushVersion } from "../resources/changes.ts";
import { keys } from "../store/keys.ts";
import type { Store } from "../store/store.ts";

/** Changed resources listed per push; the rest are counted in resourcesOmitted. */
export const maxListedResources = 100;

/** One push as push_status shows it. */
export interface PushStatusItem {
  version: number;
  /** When it was published (RFC 3339). */
  time: string;
  full: boolean;
  /**
   * Present on a refresh push (lib/push/push-refresh.ts): a Full push after which Envoy sidecars'
   * resources, built on demand from the mesh rather than published, may differ beyond `resources`;
   * so `resourcesChanged: 0` there does not mean the push changed nothing.
   */
  refresh?: true;
  /** Trigger reason ─▶ how many events of it were merged (istiod's ReasonStats). */
  reason: Record<string, number>;
  /** ConfigKeys the push named (null: everything), at most 1000 listed of configsCount. */
  configs: string[] | null;
  configsCount: number;
  /** From its first event to publication (ms): debounce plus generation. */
  durationMs: number;
  resourcesChanged: number;
  resources: { type: string; name: string; version: string | null; view?: string }[];
  resourcesOmitted?: number;
}

/** What push_status answers. */
export interface PushStatus {
  /** The push counter now. */
  pushVersion: number;
  pushes: PushStatusItem[];
}

/** The item of one log entry. Pure. */
export function pushStatusItem(e: PushLogEntry): PushStatusItem {
  const configs = e.request.configsUpdated;
  const listed = e.changes.slice(0, maxListedResources);
  const omitted = e.changeCount - listed.length;
  return {
    version: e.seq,
    time: new Date(e.at).toISOString(),
    full: e.request.full,
    ...(e.refresh && { refresh: true as const }),
    reason: { ...e.request.reasons } as Record<string, number>,
    configs: configs === null ? null : [...configs],
    configsCount: e.request.configsCount ?? configs?.length ?? 0,
    durationMs: Math.max(0, e.at - e.request.start),
    resourcesChanged: e.changeCount,
    resources: listed.map((c) => ({
      type: c.typeUrl,
      name: c.name,
      version: c.version ?? null,
      ...(c.view !== undefined && { view: c.view }),
    })),
    ...(omitted > 0 && { resourcesOmitted: omitted }),
  };
}

/** What GET /debug/push_status was asked: `before` pages back (pushes numbered below it). */
export interface PushStatusQuery {
  limit: number;
  before?: number;
}

/**
 * Up to `limit` pushes numbered below `before` (default: all), newest first, read in one getMany;
 * `next` is the `before` of the next page when older pushes may be logged.
 */
export async function readPushStatus(
  store: Store,
  q: PushStatusQuery,
): Promise<{ status: PushStatus; next?: number }> {
  const current = (await store.get<PushVersion>(keys.pushVersion()))?.value.version ?? 0;
  const top = Math.min(current, (q.before ?? current + 1) - 1);
  const seqs: number[] = [];
  for (let s = top; s >= 1 && seqs.length < q.limit; s--) seqs.push(s);
  const found = await store.getMany<PushLogEntry>(seqs.map((s) => keys.pushLog(s)));
  const pushes: PushStatusItem[] = [];
  for (const s of seqs) {
    const e = found.get(keys.pushLog(s));
    if (e) pushes.push(pushStatusItem(e.value));
  }
  const last = seqs[seqs.length - 1];
  // The log keeps the latest pushes only: once one is missing, older ones are gone too.
  const more = last !== undefined && last > 1 && found.has(keys.pushLog(last));
  return { status: { pushVersion: current, pushes }, ...(more && { next: last }) };
}
