/** Publishing one planned chunk of a flush: its resources, removals and generated records, in make-before-break order. */

import type { ResourceChange } from "../resources/changes.ts";
import type { StoredResource } from "../resources/types.ts";
import { pushOrder, removalOrder } from "../resources/xds-types.ts";
import { keys, type Store, type Write, writeAll } from "../store/index.ts";
import type { ServicePlan } from "./plan.ts";

/**
 * Make before break within a chunk: upserts in push order (CDS, EDS, LDS, RDS), then removals in
 * removal order (LDS, RDS, CDS, EDS), then the services' generated records, written in that order (writeAll: one
 * synchronous call on an in-process store, one awaited call per key on the others). Streams hear
 * of the push only once every chunk is published. An upsert's change carries its bytes while the
 * push's carried bytes stay within maxFeedBodyBytes (`feed` counts them across chunks); past
 * feed.maxBytes, a change names its version only and streams read the store.
 */
export async function publishChunk(
  store: Store,
  plans: ServicePlan[],
  feed: { bodyBytes: number; maxBytes: number },
): Promise<ResourceChange[]> {
  const changes: ResourceChange[] = [];
  const writes: Write[] = [];
  // Index loops: this runs once per chunk, mostly before V8 optimizes it, and an unoptimized
  // for-of allocates an iterator result per resource.
  for (const typeUrl of pushOrder) {
    for (let i = 0; i < plans.length; i++) {
      const upserts = (plans[i] as ServicePlan).upserts;
      for (let j = 0; j < upserts.length; j++) {
        const r = upserts[j] as StoredResource;
        if (r.typeUrl !== typeUrl) continue;
        // Made by this flush and never changed after: the store takes it over (see Store.put).
        writes.push({ key: keys.resource(r.typeUrl, r.name), value: r });
        feed.bodyBytes += r.body.byteLength;
        // Within the feed's bytes the change is the published resource itself (its fields are a
        // ResourceChange's), shared like the store's copy; past them, its name and version only.
        changes.push(
          feed.bodyBytes <= feed.maxBytes ? r : { typeUrl: r.typeUrl, name: r.name, version: r.version },
        );
      }
    }
  }
  for (const typeUrl of removalOrder) {
    for (const p of plans) {
      for (const r of p.removals) {
        if (r.typeUrl !== typeUrl) continue;
        writes.push({ key: keys.resource(r.typeUrl, r.name), deleted: true });
        changes.push({ typeUrl: r.typeUrl, name: r.name, version: null });
      }
    }
  }
  for (const p of plans) {
    if (!p.recordChanged) continue;
    const key = keys.generated(p.ref.namespace, p.ref.hostname);
    writes.push(Object.keys(p.record).length === 0 ? { key, deleted: true } : { key, value: p.record });
  }
  await writeAll(store, writes);
  return changes;
}
