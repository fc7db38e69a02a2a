/** The agent's requests to the upstream, as plain data: subscriptions (sliced), ACKs, and their order. */
import type { Node } from "../gen/envoy/config/core/v3/base_pb.ts";
import { pushOrder } from "../resources/xds-types.ts";
import type { Demand, TypeDemand } from "./demand.ts";

/** A Delta request to the upstream, as plain data (the driver encodes it). */
export interface UpstreamRequest {
  typeUrl: string;
  /** Set on the first request of the stream only. */
  node?: Node;
  subscribe: string[];
  initialVersions: Record<string, string>;
  responseNonce: string;
  /** A NACK: the local proxy's error, kept. */
  error?: { code: number; message: string };
}

/** The types the upstream serves: it refuses a whole Delta stream asking for another. */
export const servedTypes: ReadonlySet<string> = new Set(pushOrder);

/**
 * The most names one upstream request subscribes to: well under the server's
 * EDGEPILOT_MAX_NAMES_PER_REQUEST (default 10,000), which refuses the whole stream past it.
 */
export const maxNamesPerUpstreamRequest = 1000;

/** Requests subscribing `names`, a slice at a time; the first carries the node and what the cache holds. */
export function subscriptions(
  typeUrl: string,
  names: readonly string[],
  initialVersions: Record<string, string>,
  node: Node | undefined,
): UpstreamRequest[] {
  const out: UpstreamRequest[] = [];
  for (let i = 0; i === 0 || i < names.length; i += maxNamesPerUpstreamRequest) {
    out.push({
      typeUrl,
      subscribe: names.slice(i, i + maxNamesPerUpstreamRequest),
      initialVersions: i === 0 ? initialVersions : {},
      responseNonce: "",
      ...(i === 0 && node && { node }),
    });
  }
  return out;
}

/**
 * A Connect call (Poll or Watch) of `typeUrl`: stateless, so every call carries the node, the whole
 * subscription in one request, and what the cache holds (Poll/Watch's initial_resource_versions), so
 * an upstream that publishes the same resources resends nothing. The driver (re)starts the type's
 * call with it; a PollRequest holds no nonce (a NACK adds error_detail, nack.ts).
 */
export function callOf(
  typeUrl: string,
  want: TypeDemand,
  held: ReadonlyMap<string, string> | undefined,
  node: Node | undefined,
): UpstreamRequest {
  return {
    typeUrl,
    subscribe: subscriptionOf(want),
    initialVersions: held ? Object.fromEntries(held) : {},
    responseNonce: "",
    ...(node && { node }),
  };
}

/** An ACK of the response with `nonce`. */
export function ackOf(typeUrl: string, nonce: string): UpstreamRequest {
  return { typeUrl, subscribe: [], initialVersions: {}, responseNonce: nonce };
}

/** "*" for a wildcard, then the names, sorted. */
export function subscriptionOf(want: TypeDemand): string[] {
  return [...(want.wildcard ? ["*"] : []), ...[...want.names].sort()];
}

/** Make before break: CDS, EDS, LDS, RDS (the only types asked upstream). */
export function typeOrder(demand: Demand): string[] {
  return pushOrder.filter((t) => demand.has(t));
}
