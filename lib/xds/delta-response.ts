/** Builds DeltaDiscoveryResponses from stored resources: one place decides packing and versions. */
import {
  type DeltaDiscoveryResponse,
  DeltaDiscoveryResponseSchema,
  type Resource,
  type ResourceName,
} from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { StoredResource } from "../resources/types.ts";
import { sharedResource } from "./response-bytes.ts";

/** The empty lists of a response (shared and frozen: responses are read, never changed). */
const noNames: readonly string[] = Object.freeze([]);
const noResourceNames: readonly ResourceName[] = Object.freeze([]);

/**
 * A response carrying `resources` (each as Resource { name, version = content hash, resource =
 * Any }) and `removed`. `systemVersionInfo` must be the set version (version.ts setVersion) of
 * what the session considers the client to hold once this response is applied: deterministic, so
 * the same mesh and the same client state give the same string on every instance. The Resource
 * messages are shared and frozen (response-bytes.ts): every stream sent a resource object sends
 * the same message, encoded once.
 */
export function deltaResponse(
  typeUrl: string,
  resources: readonly StoredResource[],
  removed: readonly string[],
  nonce: string,
  systemVersionInfo: string,
): DeltaDiscoveryResponse {
  const names = removed.length === 0 ? noNames : [...removed];
  return responseOf(typeUrl, resources.map(sharedResource), names, nonce, systemVersionInfo);
}

/**
 * deltaResponse for a class's shared answer (delta-shared.ts): `messages` is the class's frozen
 * array of shared Resource messages, carried as it is (not copied), so every stream's response
 * holds the same array and response-bytes.ts encodes its part once; no removals.
 */
export function sharedDeltaResponse(
  typeUrl: string,
  messages: readonly Resource[],
  nonce: string,
  systemVersionInfo: string,
): DeltaDiscoveryResponse {
  return responseOf(typeUrl, messages, noNames, nonce, systemVersionInfo);
}

/** The message create() would make, as a literal: no reflection over the schema per response. */
function responseOf(
  typeUrl: string,
  messages: readonly Resource[],
  removed: readonly string[],
  nonce: string,
  systemVersionInfo: string,
): DeltaDiscoveryResponse {
  return {
    $typeName: DeltaDiscoveryResponseSchema.typeName,
    systemVersionInfo,
    resources: messages as Resource[],
    typeUrl,
    removedResources: removed as string[],
    removedResourceNames: noResourceNames as ResourceName[],
    nonce,
  };
}
