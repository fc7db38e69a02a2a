/**
 * Stateless SotW fetch: one DiscoveryRequest in, the current resources out, computed from the
 * store alone. Serves Envoy's unary Fetch{Clusters,Endpoints,Listeners,Routes} and REST-JSON.
 */
import type { DiscoveryRequest, DiscoveryResponse } from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import { notSyncedMessage } from "../resources/sync-gate.ts";
import type { TypeUrl } from "../resources/xds-types.ts";
import { envelopeBytes, ResponseTooLargeError, sotwResourceBytes } from "./budget.ts";
import { sotwResponse, uniqueByName } from "./response.ts";
import type { ResourceSource } from "./source.ts";

/** The most names one request may ask for. */
export const maxNamesPerRequest = 10_000;

export type FetchResult =
  | {
      kind: "ok";
      response: DiscoveryResponse;
      /** The request's version_info is the current one (REST answers 304). */
      notModified: boolean;
    }
  | { kind: "invalid"; message: string }
  /** Start-up: the client holds a version we cannot name and the registry is not synced (503, Unavailable). */
  | { kind: "unsynced"; message: string };

/**
 * Answers a fetch for `typeUrl`. No names means every resource of the type (polling clients
 * have no stream to subscribe on). The nonce is the version_info: there is nothing to pair.
 * `notModified` says the request's version_info is already current (REST's 304).
 *
 * Not `synced` (start-up, sync-gate.ts): a client that sends a version_info holds resources the
 * answer might lack, and a SotW answer without them would remove them; unless the answer's version
 * is the client's, it gets `unsynced` (keep what you hold, retry). A client with no version_info
 * holds nothing and is served what exists.
 *
 * `maxBytes` (EDGEPILOT_MAX_RESPONSE_BYTES; unary gRPC/Connect Fetch): an answer over it throws
 * ResponseTooLargeError, whatever the type. A unary call has one answer, and a stateless one
 * cannot be continued (asked again, it would be the same first piece), so the client must ask for
 * fewer names or use ADS, Delta or Poll, which cut answers. REST-JSON passes none: HTTP bodies
 * have no message limit.
 */
export async function fetchDiscovery(
  source: ResourceSource,
  typeUrl: TypeUrl,
  req: DiscoveryRequest,
  synced = true,
  maxBytes = Number.POSITIVE_INFINITY,
): Promise<FetchResult> {
  if (req.typeUrl !== "" && req.typeUrl !== typeUrl) {
    return { kind: "invalid", message: `type_url ${req.typeUrl} does not match this method's ${typeUrl}` };
  }
  if (req.resourceNames.length > maxNamesPerRequest) {
    return {
      kind: "invalid",
      message: `${req.resourceNames.length} resource_names; at most ${maxNamesPerRequest} per request`,
    };
  }
  const names = req.resourceNames.filter((n) => n !== "*");
  const wildcard = req.resourceNames.length === 0 || names.length < req.resourceNames.length;
  const resources = wildcard
    ? await source.list(typeUrl)
    : await source.get(typeUrl, [...new Set(names)].sort());
  if (Number.isFinite(maxBytes)) {
    const bytes = uniqueByName(resources).unique.reduce((n, r) => n + sotwResourceBytes(r), envelopeBytes);
    if (bytes > maxBytes) throw new ResponseTooLargeError(typeUrl, bytes, maxBytes);
  }
  const { response } = await sotwResponse(typeUrl, resources, (v) => v);
  if (!synced && req.versionInfo !== "" && req.versionInfo !== response.versionInfo)
    return { kind: "unsynced", message: notSyncedMessage };
  return {
    kind: "ok",
    response,
    notModified: req.versionInfo !== "" && req.versionInfo === response.versionInfo,
  };
}
