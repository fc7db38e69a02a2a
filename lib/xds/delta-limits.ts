/**
 * Limits on ADS streams and on what one Delta request may ask for, checked at the RPC edge before
 * a request reaches the session. A check returns a problem (never throws); the edge maps it to a
 * gRPC status whose message tells the operator or proxy author what to change.
 */
import type { DeltaDiscoveryRequest } from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import { pushOrder } from "../resources/xds-types.ts";

/** Per-instance and per-request bounds for ADS (SotW and Delta). */
export interface AdsLimits {
  /** EDGEPILOT_MAX_STREAMS: open ADS streams (SotW and Delta together) per instance; more ▶ ResourceExhausted. */
  maxStreams: number;
  /** EDGEPILOT_MAX_NAMES_PER_REQUEST: resource_names_subscribe + _unsubscribe of one Delta request. */
  maxNamesPerRequest: number;
  /** Entries of initial_resource_versions in one Delta request (a wildcard reconnect lists all). */
  maxInitialVersions: number;
  /** Explicitly subscribed names of one type on one Delta stream. */
  maxSubscribedNames: number;
  /**
   * Distinct type URLs one SotW stream may ask for (SotW answers types it does not serve with
   * empty responses, so each one is state the stream keeps). Delta refuses unserved types.
   */
  maxTypeUrlsPerStream: number;
}

/** The defaults: generous for a large mesh, small enough that one proxy cannot exhaust an instance. */
export const defaultAdsLimits: Readonly<AdsLimits> = {
  maxStreams: 10_000,
  maxNamesPerRequest: 10_000,
  maxInitialVersions: 100_000,
  maxSubscribedNames: 100_000,
  // Envoy asks for CDS, EDS, LDS, RDS and a few more (SDS, ECDS, VHDS, RTDS): 16 is plenty.
  maxTypeUrlsPerStream: 16,
};

/** Why a Delta request is refused; `code` maps to gRPC InvalidArgument or ResourceExhausted. */
export interface DeltaRequestProblem {
  code: "invalid-argument" | "resource-exhausted";
  message: string;
}

const served = new Set<string>(pushOrder);

// Module-level, not per call: a request's check makes no closure when it finds nothing.
const invalid = (message: string): DeltaRequestProblem => ({ code: "invalid-argument", message });
const exhausted = (message: string): DeltaRequestProblem => ({ code: "resource-exhausted", message });

/**
 * Checks one Delta request against the served type URLs and `limits`. `subscribed` is the set of
 * names the stream already subscribes to explicitly for the request's type (re-subscriptions do
 * not count twice). Undefined when the request may proceed.
 */
export function checkDeltaRequest(
  req: DeltaDiscoveryRequest,
  limits: Readonly<AdsLimits>,
  subscribed: ReadonlySet<string>,
): DeltaRequestProblem | undefined {
  if (req.typeUrl === "") {
    return invalid(
      `DeltaDiscoveryRequest.type_url is empty: on an aggregated stream every request must name its type, one of ${[...served].join(", ")}`,
    );
  }
  if (!served.has(req.typeUrl)) {
    return invalid(
      `type_url "${req.typeUrl}" is not served by this control plane; it serves ${[...served].join(", ")}`,
    );
  }
  if (req.resourceLocatorsSubscribe.length > 0 || req.resourceLocatorsUnsubscribe.length > 0) {
    return invalid(
      "resource_locators_subscribe/unsubscribe are not supported; name resources in resource_names_subscribe/unsubscribe",
    );
  }
  const names = req.resourceNamesSubscribe.length + req.resourceNamesUnsubscribe.length;
  if (names > limits.maxNamesPerRequest) {
    return exhausted(
      `the request names ${names} resources in resource_names_subscribe + resource_names_unsubscribe; ` +
        `at most ${limits.maxNamesPerRequest} are accepted per request (EDGEPILOT_MAX_NAMES_PER_REQUEST): ` +
        "split the change over several requests",
    );
  }
  let initial = 0;
  for (const _ in req.initialResourceVersions) initial++;
  if (initial > limits.maxInitialVersions) {
    return exhausted(
      `initial_resource_versions lists ${initial} resources; at most ${limits.maxInitialVersions} are accepted: ` +
        "reconnect without them (everything is resent) or raise the control plane's maxInitialVersions",
    );
  }
  if (req.resourceNamesSubscribe.length === 0) return undefined; // an ACK or an unsubscription
  let total = subscribed.size;
  for (const n of new Set(req.resourceNamesSubscribe)) if (n !== "*" && !subscribed.has(n)) total++;
  if (total > limits.maxSubscribedNames) {
    return exhausted(
      `this stream would subscribe to ${total} ${req.typeUrl} names; at most ${limits.maxSubscribedNames} ` +
        "are accepted per type and stream: unsubscribe from names no longer needed",
    );
  }
  return undefined;
}
