/**
 * istiod's inventory gauges, read from the store: pilot_services, pilot_virt_services and
 * pilot_endpoint_not_ready. They are recounted at a scrape only when a push happened since the
 * last count (what they count changes only with a push), so an idle mesh's scrapes read nothing.
 */
import type { MeshObserver } from "../core/hooks.ts";
import type { EndpointShardsPiece, EndpointShardsStored } from "../shards/shard-pieces.ts";
import type { EndpointShardsRecord } from "../shards/shards-record.ts";
import { isShardPiece, keys, listAll, type Store } from "../store/index.ts";
import type { Registry } from "./registry.ts";

/** Declares the gauges on `registry` and counts them from `store`; the observer marks them stale. */
export function addInventory(registry: Registry, store: Store): MeshObserver {
  const services = registry
    .gauge({ name: "pilot_services", help: "Total services known to pilot." })
    .labels();
  const virtualServices = registry
    .gauge({ name: "pilot_virt_services", help: "Total virtual services known to pilot." })
    .labels();
  const notReady = registry
    .gauge({ name: "pilot_endpoint_not_ready", help: "Endpoint found in unready state." })
    .labels();
  let stale = true;
  registry.collect(async () => {
    if (!stale) return;
    stale = false;
    try {
      services.set(distinctParents(await listAll(store, keys.services())));
      virtualServices.set(distinctParents(await listAll(store, keys.configPrefix("VirtualService"))));
      let unready = 0;
      // Records stored whole and the pieces of large ones (lib/shards/shard-pieces.ts) list together.
      for (const { key, value } of await listAll<EndpointShardsStored | EndpointShardsPiece>(
        store,
        keys.allShards(),
      )) {
        const lists = isShardPiece(key)
          ? [(value as EndpointShardsPiece).endpoints]
          : Object.values((value as EndpointShardsRecord).shards ?? {});
        for (const endpoints of lists) for (const e of endpoints) if (e.health !== "HEALTHY") unready++;
      }
      notReady.set(unready);
    } catch (err) {
      stale = true;
      throw err;
    }
  });
  return {
    onPush() {
      stale = true;
    },
  };
}

/**
 * How many distinct keys remain once each key's last segment is cut: one service's records in
 * several clusters (`svc/<ns>/<host>/<cluster>`), one config's copies (`cfg/<kind>/<ns>/<name>/<cluster>`).
 */
function distinctParents(entries: readonly { key: string }[]): number {
  const seen = new Set<string>();
  for (const { key } of entries) seen.add(key.slice(0, key.lastIndexOf("/")));
  return seen.size;
}
