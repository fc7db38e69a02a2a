/**
 * Envoy's REST-JSON xDS (`POST /v3/discovery:<type>`), runtime-neutral: a canonical proto-JSON
 * DiscoveryRequest in, a DiscoveryResponse in canonical proto JSON out (Any with `@type`), or
 * 304 when the request's version_info is current. The answer is fetch.ts's, as for the unary
 * Fetch RPCs, so REST, Connect and gRPC polling agree on versions.
 */
import { fromJson, type JsonValue, toJson } from "@bufbuild/protobuf";
import {
  type DiscoveryRequest,
  DiscoveryRequestSchema,
  DiscoveryResponseSchema,
} from "../gen/envoy/service/discovery/v3/discovery_pb.ts";
import { type TypeUrl, xdsTypes } from "../resources/xds-types.ts";
import { fetchDiscovery } from "./fetch.ts";
import { xdsRegistry } from "./registry.ts";
import type { ResourceSource } from "./source.ts";

/** REST paths and the type each serves, as Envoy's REST subscription posts them. */
export const restPaths: Readonly<Record<string, TypeUrl>> = Object.fromEntries(
  xdsTypes.map((t) => [t.restPath, t.typeUrl]),
);

/**
 * What to send back: 200 with proto JSON text, 304 with no body, 400/403 with an error to show, or
 * 503 while the registry is not synced and the client holds a version that may not be current.
 */
export type RestAnswer =
  | { status: 200; json: string }
  | { status: 304 }
  | RestRefusal
  | { status: 503; error: string };

/** A refused REST request: 400 (bad request) or 403 (the caller may not ask this). */
export type RestRefusal = { status: 400 | 403; error: string };

/** How one REST request is answered. */
export interface RestOptions {
  /** EDGEPILOT_MAX_NAMES_PER_REQUEST. */
  maxNames: number;
  /** Start-up sync: false answers 503 to a client holding a version that is not current. */
  synced?: boolean;
  /** The auth node check; sees the parsed request before anything is read. */
  check?: (req: DiscoveryRequest) => RestRefusal | undefined;
}

/**
 * Answers one REST request for `typeUrl` whose body is `body` (text), read from `source` (or the
 * source a function gives for the parsed request: its node's view). Never throws for a bad request.
 */
export async function answerRest(
  source: ResourceSource | ((req: DiscoveryRequest) => Promise<ResourceSource>),
  typeUrl: TypeUrl,
  body: string,
  options: RestOptions,
): Promise<RestAnswer> {
  const { maxNames, synced = true, check } = options;
  const req = parseDiscoveryRequest(body);
  if (!req.ok) return { status: 400, error: req.error };
  const refused = check?.(req.value);
  if (refused) return refused;
  const n = req.value.resourceNames.length;
  if (n > maxNames)
    return {
      status: 400,
      error: `resource_names has ${n} names; at most ${maxNames} per request (EDGEPILOT_MAX_NAMES_PER_REQUEST)`,
    };
  const from = typeof source === "function" ? await source(req.value) : source;
  const result = await fetchDiscovery(from, typeUrl, req.value, synced);
  if (result.kind === "invalid") return { status: 400, error: result.message };
  if (result.kind === "unsynced") return { status: 503, error: result.message };
  if (result.notModified) return { status: 304 };
  const json = toJson(DiscoveryResponseSchema, result.response, { registry: xdsRegistry });
  return { status: 200, json: JSON.stringify(json) };
}

/** A DiscoveryRequest from proto JSON (snake_case or lowerCamelCase names); errors name what is wrong. */
export function parseDiscoveryRequest(
  body: string,
): { ok: true; value: DiscoveryRequest } | { ok: false; error: string } {
  let json: JsonValue;
  try {
    json = JSON.parse(body === "" ? "{}" : body) as JsonValue;
  } catch (e) {
    return { ok: false, error: `malformed JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
  if (json === null || typeof json !== "object" || Array.isArray(json))
    return { ok: false, error: "the body must be a JSON object: a DiscoveryRequest" };
  try {
    return { ok: true, value: fromJson(DiscoveryRequestSchema, json, { registry: xdsRegistry }) };
  } catch (e) {
    return { ok: false, error: `not a DiscoveryRequest: ${e instanceof Error ? e.message : String(e)}` };
  }
}
