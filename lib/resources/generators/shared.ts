/** Helpers every proxyless gRPC generator shares: resource names, merged ports, ADS config sources. */
import { create, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import {
  AggregatedConfigSourceSchema,
  ApiVersion,
  type ConfigSource,
  ConfigSourceSchema,
} from "../../gen/envoy/config/core/v3/config_source_pb.ts";
import type { Service, ServicePort } from "../../model/index.ts";
import type { ServiceView } from "../types.ts";

/** Istio's BuildSubsetKey for the default subset: `outbound|<port>||<host>` (Cluster and CLA name). */
export function clusterName(hostname: string, port: number): string {
  return `outbound|${port}||${hostname}`;
}

/** Istio's BuildSubsetKey for a subset: `outbound|<port>|<subset>|<host>` (Cluster and CLA name). */
export function subsetClusterName(hostname: string, port: number, subset: string): string {
  return `outbound|${port}|${subset}|${hostname}`;
}

/** net.JoinHostPort for a hostname: `<host>:<port>` (proxyless gRPC Listener and RouteConfiguration name). */
export function listenerName(hostname: string, port: number): string {
  return `${hostname}:${port}`;
}

/** Plain code-unit comparison: the same order on every runtime and locale (never localeCompare). */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The service's records ordered by clusterId, so "first cluster wins" means the same on every run. */
export function sortedServices(view: ServiceView): Service[] {
  return [...view.services].sort((a, b) => compareStrings(a.clusterId, b.clusterId));
}

/**
 * The union of every cluster's ports, by port number, ascending. On a conflict (one number, two
 * names or protocols) the record of the first cluster in clusterId order wins. Empty when the
 * service has no records, so a deleted service generates nothing.
 */
export function mergedPorts(view: ServiceView): ServicePort[] {
  const byNumber = new Map<number, ServicePort>();
  for (const svc of sortedServices(view)) {
    for (const p of svc.ports) {
      if (!byNumber.has(p.port)) byNumber.set(p.port, { name: p.name, port: p.port, protocol: p.protocol });
    }
  }
  return [...byNumber.values()].sort((a, b) => a.port - b.port);
}

/** A ConfigSource pointing at the ADS stream the resource came on, with the v3 transport (A27). */
export function adsConfigSource(): ConfigSource {
  return ADS_CONFIG_SOURCE;
}

/** Per schema: its zero message, or null when create() must be used (proto2 defaults). */
const zeros = new WeakMap<DescMessage, object | null>();

/**
 * `create(schema, fields)` for the wide messages every resource has (Cluster, Listener,
 * HttpConnectionManager have 40 to 60 fields each, and both create() and a copy of a zero message
 * write every one of them): a message whose prototype is the schema's zero message, made once by
 * create(), with only `fields` as its own properties. protobuf-es reads such a message as it
 * reads its own proto2 messages (defaults on the prototype chain): an unset field reads as its zero
 * value, explicit presence is an own property, so toBinary, equals and the reflection API see the
 * same message as create() makes, and it encodes to the same bytes. `fields` must already be in
 * message form (sub-messages made by create() or by this; oneofs as `{ case, value }`), which the
 * types enforce. What the zero holds, its empty lists and unset oneofs, is frozen, so nothing can
 * change them through one resource; a schema whose zero message has a prototype itself (proto2
 * defaults) goes through create() instead. Messages built here are for encoding and reading.
 */
export function message<Desc extends DescMessage>(
  schema: Desc,
  fields: Partial<Omit<MessageShape<Desc>, "$typeName" | "$unknown">>,
): MessageShape<Desc> {
  const zero = zeroOf(schema);
  if (zero === null) return create(schema, fields as never);
  const out = Object.create(zero) as Record<string, unknown>;
  // As create(): a field given as undefined or null keeps its zero value.
  for (const key in fields) {
    const value = (fields as Record<string, unknown>)[key];
    if (value !== undefined && value !== null) out[key] = value;
  }
  return out as MessageShape<Desc>;
}

/**
 * An empty message of `schema` made as `message` makes one, for a hot path that sets its fields
 * one by one (no fields object to copy): the caller sets only fields in message form, never to
 * undefined or null. A schema `message` would hand to create() (proto2 defaults) gets create().
 */
export function blank<Desc extends DescMessage>(schema: Desc): MessageShape<Desc> {
  const zero = zeroOf(schema);
  return (zero === null ? create(schema) : Object.create(zero)) as MessageShape<Desc>;
}

/** The schema's frozen-valued zero message (the prototype `message` gives), or null for create(). */
function zeroOf(schema: DescMessage): object | null {
  let zero = zeros.get(schema);
  if (zero === undefined) {
    const made = create(schema) as object;
    // The zero itself stays unfrozen: a frozen prototype's properties could not be set on the
    // messages that inherit them. It never leaves this module except as their prototype.
    zero = Object.getPrototypeOf(made) === Object.prototype ? freezeValues(made) : null;
    zeros.set(schema, zero);
  }
  return zero;
}

/** Freezes a message and everything in it (bytes excepted): for messages many resources share. */
export function deepFreeze<T extends object>(value: T): T {
  return Object.freeze(freezeValues(value));
}

/** Deep-freezes what `value` holds, leaving `value` itself as it is. */
function freezeValues<T extends object>(value: T): T {
  for (const item of Object.values(value)) {
    if (typeof item !== "object" || item === null || Object.isFrozen(item)) continue;
    if (ArrayBuffer.isView(item)) continue; // bytes: a non-empty view cannot be frozen (zeros are empty)
    deepFreeze(item);
  }
  return value;
}

/** Shared by every Cluster and RDS config: frozen, so no resource can change it for the others. */
const ADS_CONFIG_SOURCE: ConfigSource = deepFreeze(
  create(ConfigSourceSchema, {
    configSourceSpecifier: { case: "ads", value: create(AggregatedConfigSourceSchema) },
    resourceApiVersion: ApiVersion.V3,
  }),
);
