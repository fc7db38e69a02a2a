/**
 * What the local proxies ask for, per type URL: the union of their subscriptions, read off their
 * requests (SotW and Delta) with the xDS protocol's wildcard rules. The union only grows while the
 * agent lives: a proxy that restarts asks again for what it had, and finds it cached and current.
 */
import type {
  DeltaDiscoveryRequest,
  DiscoveryRequest,
} from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import { wildcardTypes } from "../xds/subscription.ts";

/** One type URL's subscription: the wildcard and/or explicit names ("*" excluded). */
export interface TypeDemand {
  wildcard: boolean;
  names: ReadonlySet<string>;
}

/** type URL ─▶ subscription. */
export type Demand = ReadonlyMap<string, TypeDemand>;

/** What one local request adds to the subscription of its type (nothing for an ACK). */
export interface Ask {
  typeUrl: string;
  names: string[];
  wildcard: boolean;
}

/**
 * The ask of a SotW request: its resource_names; for LDS/CDS an empty list (or "*") is the wildcard.
 * Undefined when it names no type or asks for nothing.
 */
export function sotwAsk(req: DiscoveryRequest): Ask | undefined {
  if (req.typeUrl === "") return undefined;
  const canWildcard = wildcardTypes.has(req.typeUrl);
  const names = req.resourceNames.filter((n) => !(canWildcard && n === "*"));
  const wildcard = canWildcard && (req.resourceNames.length === 0 || names.length < req.resourceNames.length);
  return wildcard || names.length > 0 ? { typeUrl: req.typeUrl, names, wildcard } : undefined;
}

/**
 * The ask of a Delta request: resource_names_subscribe; for LDS/CDS "*", or a stream's first request
 * of the type naming nothing in either list (the legacy wildcard). `first`: the stream's first of its type.
 */
export function deltaAsk(req: DeltaDiscoveryRequest, first: boolean): Ask | undefined {
  if (req.typeUrl === "") return undefined;
  const canWildcard = wildcardTypes.has(req.typeUrl);
  const names = req.resourceNamesSubscribe.filter((n) => !(canWildcard && n === "*"));
  const legacy =
    first && req.resourceNamesSubscribe.length === 0 && req.resourceNamesUnsubscribe.length === 0;
  const wildcard = canWildcard && (legacy || names.length < req.resourceNamesSubscribe.length);
  return wildcard || names.length > 0 ? { typeUrl: req.typeUrl, names, wildcard } : undefined;
}

/** `demand` with `names` (and the wildcard) added to `typeUrl`; the same map when nothing is new. */
export function addDemand(
  demand: Demand,
  typeUrl: string,
  names: readonly string[],
  wildcard: boolean,
): Demand {
  const had = demand.get(typeUrl);
  const fresh = names.filter((n) => !had?.names.has(n));
  if (had && fresh.length === 0 && (had.wildcard || !wildcard)) return demand;
  const next = new Map(demand);
  next.set(typeUrl, {
    wildcard: wildcard || (had?.wildcard ?? false),
    names: new Set([...(had?.names ?? []), ...fresh]),
  });
  return next;
}
