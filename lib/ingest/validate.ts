/**
 * Whole-batch validation of watch events. Every event is checked before anything is applied;
 * the first problem names its event index and field.
 */
import {
  arrayOf,
  boolean,
  type Check,
  dnsName,
  intOrString,
  isObject,
  object,
  port,
  string,
  stringMap,
  typeName,
} from "./check.ts";
import type { IngestError, Result } from "./errors.ts";
import { eventTypes, type KubeObject, knownKinds, type WatchEvent } from "./events.ts";

const metadata = object({ labels: stringMap, annotations: stringMap, resourceVersion: string, uid: string });

const servicePort = object(
  { name: string, port, protocol: string, appProtocol: string, targetPort: intOrString },
  ["port"],
);

const objectRef = object({ kind: string, name: string, namespace: string, uid: string });

/** An IP list as v1 Endpoints carry it (shape only; address syntax is checked by the field rules). */
const endpointAddresses = arrayOf(
  object({ ip: string, hostname: string, nodeName: string, targetRef: objectRef }, ["ip"]),
);

/**
 * Fields of the kinds we convert (the types the converters read; a wrong type is a 400, never an
 * exception while applying); other known kinds are checked for metadata only.
 */
const kindChecks: Partial<Record<string, Check>> = {
  Service: object(
    {
      spec: object({
        type: string,
        clusterIP: string,
        clusterIPs: arrayOf(string),
        ports: arrayOf(servicePort),
        selector: stringMap,
        externalName: string,
        externalIPs: arrayOf(string),
        trafficDistribution: string,
        internalTrafficPolicy: string,
        publishNotReadyAddresses: boolean,
      }),
      status: object({
        loadBalancer: object({ ingress: arrayOf(object({ ip: string, hostname: string })) }),
      }),
    },
    ["spec"],
  ),
  EndpointSlice: object(
    {
      addressType: string,
      endpoints: arrayOf(
        object(
          {
            addresses: arrayOf(string),
            conditions: object({ ready: boolean, serving: boolean, terminating: boolean }),
            hostname: string,
            nodeName: string,
            zone: string,
            targetRef: objectRef,
          },
          ["addresses"],
        ),
      ),
      ports: arrayOf(object({ name: string, port, protocol: string, appProtocol: string })),
    },
    ["addressType"],
  ),
  Endpoints: object({
    subsets: arrayOf(
      object({
        addresses: endpointAddresses,
        notReadyAddresses: endpointAddresses,
        ports: arrayOf(object({ name: string, port, protocol: string, appProtocol: string }, ["port"])),
      }),
    ),
  }),
  Pod: object({
    metadata: object({ deletionTimestamp: string }),
    spec: object({ serviceAccountName: string, serviceAccount: string, nodeName: string }),
    status: object({ phase: string, podIP: string, podIPs: arrayOf(object({ ip: string }, ["ip"])) }),
  }),
};

/** Validates every event; on success the typed events, in order. */
export function validateEvents(raw: readonly unknown[]): Result<WatchEvent[]> {
  const events: WatchEvent[] = [];
  for (let index = 0; index < raw.length; index++) {
    const r = validateEvent(raw[index]);
    if (!r.ok) return { ok: false, error: { index, ...r.error } };
    events.push(r.value);
  }
  return { ok: true, value: events };
}

/** Validates one raw event, as validateEvents does each (callers that pace a large batch use it). */
export function validateEvent(e: unknown): Result<WatchEvent> {
  const fail = (field: string, message: string): Result<WatchEvent> => ({
    ok: false,
    error: { field, message },
  });
  if (!isObject(e)) return fail("", `an event must be an object, got ${typeName(e)}`);
  const type = e.type;
  if (typeof type !== "string" || !(eventTypes as readonly string[]).includes(type)) {
    return fail("type", `unknown event type ${JSON.stringify(type)}; want one of ${eventTypes.join(", ")}`);
  }
  const obj = e.object;
  if (type === "BOOKMARK") {
    const rv = isObject(obj) && isObject(obj.metadata) ? obj.metadata.resourceVersion : undefined;
    return {
      ok: true,
      value: { type: "BOOKMARK", resourceVersion: typeof rv === "string" ? rv : undefined },
    };
  }
  if (!isObject(obj)) return fail("object", `must be an object, got ${typeName(obj)}`);
  const problem = validateObject(obj);
  if (problem) return { ok: false, error: problem };
  return { ok: true, value: { type: type as "ADDED" | "MODIFIED" | "DELETED", object: obj as KubeObject } };
}

function validateObject(obj: Record<string, unknown>): IngestError | undefined {
  const kind = obj.kind;
  if (typeof kind !== "string" || kind === "") return { field: "object.kind", message: "is required" };
  if (!isObject(obj.metadata)) return { field: "object.metadata", message: "is required" };
  const meta = obj.metadata;
  const known = knownKinds[kind as keyof typeof knownKinds];
  const name = dnsName(meta.name, "object.metadata.name");
  if (name) return meta.name === undefined ? { field: "object.metadata.name", message: "is required" } : name;
  if (known?.namespaced ?? meta.namespace !== undefined) {
    if (meta.namespace === undefined) {
      return { field: "object.metadata.namespace", message: `is required for a ${kind}` };
    }
    const ns = dnsName(meta.namespace, "object.metadata.namespace");
    if (ns) return ns;
  }
  const served: readonly string[] | undefined = known?.apiVersions;
  if (served && obj.apiVersion !== undefined && !served.includes(obj.apiVersion as string)) {
    return {
      field: "object.apiVersion",
      message: `${JSON.stringify(obj.apiVersion)} is not served for ${kind}; want ${served.join(" or ")}`,
    };
  }
  return metadata(meta, "object.metadata") ?? kindChecks[kind]?.(obj, "object");
}
