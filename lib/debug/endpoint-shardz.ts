/**
 * /debug/endpointShardz: the endpoint shards of each service (keys.allShards()), shaped like
 * istiod's Shardz: hostname ─▶ namespace ─▶ { Shards: shard key ─▶ endpoints, ServiceAccounts }.
 * Bounded twice: a page holds at most `limit` services and stops early past maxPageEndpoints
 * endpoints; each shard lists at most maxShardEndpoints and counts the rest in EndpointsOmitted.
 */
import type { Endpoint } from "../model/endpoint.ts";
import { parseShardKey } from "../model/keys.ts";
import {
  createNetworkResolver,
  type EndpointNetwork,
  type NetworkResolver,
} from "../resources/network-resolve.ts";
import type { NetworkTable } from "../resources/network-table.ts";
import type { EndpointShardsStored } from "../shards/shard-pieces.ts";
import { assembleShards, readShards } from "../shards/shard-store.ts";
import type { EndpointShardsRecord } from "../shards/shards-record.ts";
import { isShardPiece, keys } from "../store/keys.ts";
import type { Store } from "../store/store.ts";
import { readPage } from "./page.ts";
import type { Parsed } from "./params.ts";

/** Endpoints listed per shard; the rest are counted. */
export const maxShardEndpoints = 1000;
/** A page ends after the service that takes it past this many endpoints. */
export const maxPageEndpoints = 10_000;

/** One endpoint as istiod's IstioEndpoint JSON names its fields. */
export interface ShardzEndpoint {
  Labels?: Record<string, string>;
  Address: string;
  ServicePortName: string;
  ServiceAccount?: string;
  Network?: string;
  /**
   * How Network was found (edgepilot's, not istiod's): label, entry, systemNamespace,
   * fromRegistry, or `fromCidr <range>`; only when the mesh has networks and the endpoint one.
   */
  NetworkSource?: string;
  Locality: { Label: string };
  EndpointPort: number;
  LbWeight?: number;
  HealthStatus: string;
}

/** One service's shards. */
export interface ShardzEntry {
  Shards: Record<string, ShardzEndpoint[]>;
  ServiceAccounts: string[];
  /** Shard key ─▶ endpoints not listed (over maxShardEndpoints). */
  EndpointsOmitted?: Record<string, number>;
}

/** hostname ─▶ namespace ─▶ shards, as istiod answers. */
export type Shardz = Record<string, Record<string, ShardzEntry>>;

/** istiod's JSON of one endpoint; `resolved`: its network as the last push's table resolves it. Pure. */
export function shardzEndpoint(e: Endpoint, resolved?: EndpointNetwork): ShardzEndpoint {
  const { region, zone, subzone } = e.locality;
  const network = resolved ? resolved.network : e.network;
  return {
    ...(Object.keys(e.labels).length > 0 && { Labels: e.labels }),
    Address: e.address,
    ServicePortName: e.servicePortName,
    ...(e.serviceAccount !== "" && { ServiceAccount: e.serviceAccount }),
    ...(network !== undefined && network !== "" && { Network: network }),
    ...(resolved && resolved.network !== "" && { NetworkSource: networkSource(resolved) }),
    // istiod's locality label: region/zone/subzone, empty trailing parts dropped.
    Locality: { Label: [region, zone, subzone].join("/").replace(/\/+$/, "") },
    EndpointPort: e.port,
    ...(e.weight !== undefined && { LbWeight: e.weight }),
    HealthStatus: e.health,
  };
}

function networkSource(n: EndpointNetwork): string {
  return n.range ? `${n.source} ${n.range}` : n.source;
}

/** One record's entry, each shard cut to maxShardEndpoints; networks resolved by `networks` when given. Pure. */
export function shardzEntry(
  r: EndpointShardsRecord,
  networks?: NetworkResolver,
): { entry: ShardzEntry; endpoints: number } {
  const entry: ShardzEntry = { Shards: {}, ServiceAccounts: r.serviceAccounts };
  let endpoints = 0;
  for (const [shard, eps] of Object.entries(r.shards)) {
    const listed = eps.slice(0, maxShardEndpoints);
    const { provider, cluster } = parseShardKey(shard);
    entry.Shards[shard] = listed.map((e) => shardzEndpoint(e, networks?.resolve(e, provider, cluster)));
    endpoints += listed.length;
    if (eps.length > listed.length) {
      entry.EndpointsOmitted ??= {};
      entry.EndpointsOmitted[shard] = eps.length - listed.length;
    }
  }
  return { entry, endpoints };
}

/** What GET /debug/endpointShardz was asked: a namespace narrows it, a hostname (with it) names one service. */
export interface ShardzQuery {
  limit: number;
  cursor?: string;
  namespace?: string;
  hostname?: string;
}

/** A page of services' shards and the cursor of the next page. */
export async function readEndpointShardz(
  store: Store,
  q: ShardzQuery,
): Promise<Parsed<{ shardz: Shardz; next?: string }>> {
  if (q.hostname !== undefined && q.namespace === undefined)
    return {
      ok: false,
      error: "query parameter hostname needs namespace (shards are kept per namespace and hostname)",
    };
  const shardz: Shardz = {};
  const table = (await store.get<NetworkTable>(keys.networkTable()))?.value;
  const networks = table && createNetworkResolver(table);
  const add = (r: EndpointShardsRecord) => {
    const { entry, endpoints } = shardzEntry(r, networks);
    shardz[r.hostname] ??= {};
    (shardz[r.hostname] as Record<string, ShardzEntry>)[r.namespace] = entry;
    return endpoints;
  };
  if (q.hostname !== undefined && q.namespace !== undefined) {
    const one = await readShards(store, q.namespace, q.hostname);
    if (one) add(one);
    return { ok: true, value: { shardz } };
  }
  const prefix = q.namespace === undefined ? keys.allShards() : keys.shardsIn(q.namespace);
  const page = await readPage<EndpointShardsStored>(store, prefix, q.limit, q.cursor);
  if (!page.ok) return page;
  let total = 0;
  // The pieces of large records are listed beside them: each record is read whole instead.
  const entries = page.value.entries.filter((e) => !isShardPiece(e.key));
  const records = await assembleShards(
    store,
    entries.map((e) => e.value),
  );
  for (const [i, e] of entries.entries()) {
    total += add(records[i] as EndpointShardsRecord);
    if (total >= maxPageEndpoints && i < entries.length - 1)
      return { ok: true, value: { shardz, next: e.key } };
  }
  return { ok: true, value: { shardz, ...(page.value.next !== undefined && { next: page.value.next }) } };
}
