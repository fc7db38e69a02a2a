/**
 * The one place test clients hand what they receive: every resource of a SotW or Delta response
 * (or a stored/generated resource) is decoded by its type URL and checked against Envoy's
 * protoc-gen-validate rules (test/support/pgv), throwing on a violation; and `createHeldSet` keeps
 * what a proxy holds so a test with a complete (whole-mesh) subscription can check its
 * cross-references (test/support/xds-refs.ts). Resources already seen with the same type and
 * content are not checked twice (a per-process cache keyed by their bytes), so re-sent and shared
 * resources cost one check.
 */
import { fromBinary, fromJson, type JsonValue, type Message } from "@bufbuild/protobuf";
import {
  type DeltaDiscoveryResponse,
  DeltaDiscoveryResponseSchema,
  type DiscoveryResponse,
  DiscoveryResponseSchema,
} from "../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { StoredResource } from "../../lib/resources/types.ts";
import { pushOrder } from "../../lib/resources/xds-types.ts";
import { keys } from "../../lib/store/keys.ts";
import { listAll, type Store } from "../../lib/store/store.ts";
import { envoyTypes, pgvViolations } from "./pgv/index.ts";
import { danglingReferences, type EncodedResource } from "./xds-refs.ts";

const checked = new Set<string>();
const MAX_CACHE = 200_000;

/** A cheap 53-bit digest of bytes (cache key only; a collision could skip one check, never fail one). */
function digest(b: Uint8Array): string {
  let h1 = 0xdeadbeef ^ b.length;
  let h2 = 0x41c6ce57 ^ b.length;
  for (let i = 0; i < b.length; i++) {
    const c = b[i] as number;
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return `${b.length}:${(h2 >>> 0).toString(36)}${(h1 >>> 0).toString(36)}`;
}

/** The PGV violations of one encoded resource of an Envoy type (none for a type we do not generate). */
export function resourceViolations(typeUrl: string, value: Uint8Array, name = ""): string[] {
  const schema = envoyTypes().registry.getMessage(typeUrl.slice(typeUrl.lastIndexOf("/") + 1));
  if (!schema) return [];
  const key = `${typeUrl}\u0000${digest(value)}`;
  if (checked.has(key)) return [];
  const label = name ? `${name}: ` : "";
  let message: Message;
  try {
    message = fromBinary(schema, value);
  } catch (e) {
    return [`${label}${schema.typeName}: does not decode (${String(e)})`];
  }
  const violations = pgvViolations(schema, message).map((v) => `${label}${v}`);
  if (violations.length === 0) {
    if (checked.size >= MAX_CACHE) checked.clear();
    checked.add(key);
  }
  return violations;
}

/** Throws, listing every violation, unless each resource passes Envoy's PGV rules. */
export function assertEnvoyValid(
  resources: Iterable<EncodedResource & { name?: string }>,
  what = "resources",
): void {
  const all: string[] = [];
  for (const r of resources) all.push(...resourceViolations(r.typeUrl, r.value, r.name));
  if (all.length > 0)
    throw new Error(
      `${what}: ${all.length} protoc-gen-validate violation(s) Envoy would NACK:\n${all.slice(0, 40).join("\n")}`,
    );
}

/** Checks every resource of a SotW DiscoveryResponse. */
export function checkSotwResponse(r: DiscoveryResponse): void {
  assertEnvoyValid(r.resources, `DiscoveryResponse ${r.typeUrl} nonce ${r.nonce}`);
}

/** Checks every resource of a DeltaDiscoveryResponse. */
export function checkDeltaResponse(r: DeltaDiscoveryResponse): void {
  const items = r.resources.flatMap((x) => (x.resource ? [{ ...x.resource, name: x.name }] : []));
  assertEnvoyValid(items, `DeltaDiscoveryResponse ${r.typeUrl} nonce ${r.nonce}`);
}

/**
 * grpc-js response deserializers that check every resource: a response Envoy would NACK fails the
 * call (grpc-js reports a throwing deserializer as INTERNAL with the error's text).
 */
export const decodeChecked = {
  sotw(b: Uint8Array): DiscoveryResponse {
    const r = fromBinary(DiscoveryResponseSchema, b);
    checkSotwResponse(r);
    return r;
  },
  delta(b: Uint8Array): DeltaDiscoveryResponse {
    const r = fromBinary(DeltaDiscoveryResponseSchema, b);
    checkDeltaResponse(r);
    return r;
  },
};

/** Checks a REST-JSON DiscoveryResponse body (canonical proto JSON, Any with @type): it parses and passes PGV. */
export function checkRestJson(body: unknown): void {
  const r = fromJson(DiscoveryResponseSchema, body as JsonValue, { registry: envoyTypes().registry });
  checkSotwResponse(r);
}

/** What a proxy holds (the latest body per type and name), for the cross-reference check. */
export interface HeldSet {
  applySotw(r: DiscoveryResponse): void;
  applyDelta(r: DeltaDiscoveryResponse): void;
  resources(): EncodedResource[];
  /** The dangling references of what is held (meaningful when the subscription is complete). */
  dangling(): string[];
}

/** A HeldSet: SotW Listener and Cluster responses replace their type (they are the full state), others merge. */
export function createHeldSet(): HeldSet {
  const held = new Map<string, Map<string, Uint8Array>>();
  const of = (t: string) => held.get(t) ?? (held.set(t, new Map()).get(t) as Map<string, Uint8Array>);
  const resources = () =>
    [...held].flatMap(([typeUrl, m]) => [...m.values()].map((value) => ({ typeUrl, value })));
  return {
    applySotw(r) {
      const m = of(r.typeUrl);
      if (r.typeUrl.endsWith(".Listener") || r.typeUrl.endsWith(".Cluster")) m.clear();
      for (const a of r.resources) {
        const name = nameOf(a.typeUrl, a.value);
        if (name !== undefined) m.set(name, a.value);
      }
    },
    applyDelta(r) {
      const m = of(r.typeUrl);
      for (const x of r.resources) if (x.resource) m.set(x.name, x.resource.value);
      for (const name of r.removedResources) m.delete(name);
    },
    resources,
    dangling: () => danglingReferences(resources()),
  };
}

/** A SotW resource's name (Cluster, Listener, RouteConfiguration: `name`; ClusterLoadAssignment: `cluster_name`). */
function nameOf(typeUrl: string, value: Uint8Array): string | undefined {
  const schema = envoyTypes().registry.getMessage(typeUrl.slice(typeUrl.lastIndexOf("/") + 1));
  if (!schema) return undefined;
  const m = fromBinary(schema, value) as unknown as { name?: string; clusterName?: string };
  return m.clusterName ?? m.name;
}

/**
 * Every resource published in `store` (each type's xds/ prefix) passes Envoy's PGV rules; with
 * `complete` (the store holds a whole mesh), the set also has no dangling reference. Returns how
 * many resources were checked.
 */
export async function assertStoreValid(store: Store, options: { complete?: boolean } = {}): Promise<number> {
  const all: (EncodedResource & { name: string })[] = [];
  for (const typeUrl of pushOrder)
    for (const e of await listAll<StoredResource>(store, keys.resourcePrefix(typeUrl)))
      all.push({ typeUrl, name: e.value.name, value: e.value.body });
  assertEnvoyValid(all, "published resources");
  if (options.complete) {
    const dangling = danglingReferences(all);
    if (dangling.length > 0)
      throw new Error(`published resources: dangling references:\n${dangling.join("\n")}`);
  }
  return all.length;
}
