/**
 * discovery.k8s.io/v1 EndpointSlice and v1 Endpoints as the API server validates them
 * (pkg/apis/discovery/validation, pkg/apis/core/validation ValidateEndpoints) for the fields the
 * registry reads: every address of the slice's addressType, ports, node and host names, the pod
 * a targetRef names, and the `kubernetes.io/service-name` label, which must be a Service name
 * so a slice can only ever feed a service of its own namespace.
 */
import {
  all,
  arrayOf,
  boolean,
  type Check,
  child,
  ip,
  isObject,
  named,
  object,
  oneOf,
  type Problem,
  port,
  quote,
  string,
} from "../registry/check.ts";
import {
  dns1035Label,
  dns1123Label,
  dns1123Subdomain,
  fullyQualifiedDomainName,
  labelValue,
  qualifiedName,
} from "../registry/names.ts";
import { protocols } from "./validate-service.ts";

/** The label naming the Service a slice belongs to (discovery.k8s.io LabelServiceName). */
export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";

const addressTypes = ["IPv4", "IPv6", "FQDN"] as const;

/** A reference to the pod behind an endpoint: a Pod's name and namespace follow their rules. */
const targetRef: Check = (v, path) => {
  const p = object({ kind: string, name: string, namespace: string, uid: string })(v, path);
  if (p || !isObject(v) || v.kind !== "Pod") return p;
  return (
    (v.name == null || v.name === "" ? undefined : named(dns1123Subdomain)(v.name, child(path, "name"))) ??
    (v.namespace == null || v.namespace === ""
      ? undefined
      : named(dns1123Label)(v.namespace, child(path, "namespace")))
  );
};

/** Names must be unique within a list of ports. */
const uniqueNames =
  (what: string, requireWhenMany: boolean): Check =>
  (ports, path) => {
    if (!Array.isArray(ports)) return undefined;
    const seen = new Set<string>();
    for (let i = 0; i < ports.length; i++) {
      const name = (ports[i] as { name?: string | null }).name ?? "";
      const at = child(`${path}[${i}]`, "name");
      if (name === "" && requireWhenMany && ports.length > 1)
        return { field: at, message: `is required when ${what} has more than one port` };
      if (seen.has(name)) return { field: at, message: `duplicate port name ${quote(name)}` };
      seen.add(name);
    }
    return undefined;
  };

const endpointPort = (portRequired: boolean): Check =>
  object(
    { name: named(dns1123Label, true), port, protocol: oneOf(protocols), appProtocol: named(qualifiedName) },
    portRequired ? ["port"] : [],
  );

function sliceEndpoint(addressType: string): Check {
  const address: Check =
    addressType === "FQDN" ? named(fullyQualifiedDomainName) : ip(addressType as "IPv4" | "IPv6");
  return object(
    {
      addresses: arrayOf(address, 100),
      conditions: object({ ready: boolean, serving: boolean, terminating: boolean }),
      hostname: named(dns1123Label),
      nodeName: named(dns1123Subdomain),
      zone: string,
      targetRef,
      hints: object({ forZones: all(arrayOf(object({ name: named(labelValue, true) }), 8), uniqueZones) }),
    },
    ["addresses"],
  );
}

const uniqueZones: Check = (zones, path) => {
  const seen = new Set<string>();
  for (let i = 0; i < (zones as { name?: string }[]).length; i++) {
    const name = (zones as { name?: string }[])[i]?.name ?? "";
    if (seen.has(name))
      return { field: child(`${path}[${i}]`, "name"), message: `duplicate zone ${quote(name)}` };
    seen.add(name);
  }
  return undefined;
};

const nonEmptyAddresses: Check = (endpoints, path) => {
  const list = endpoints as { addresses: unknown[] }[];
  const i = list.findIndex((e) => e.addresses.length === 0);
  return i < 0 ? undefined : { field: `${path}[${i}].addresses`, message: "must contain at least 1 address" };
};

type AddressType = (typeof addressTypes)[number];

/** The body of a slice by its addressType, built once. */
const sliceBody = Object.fromEntries(
  addressTypes.map((t) => [
    t,
    object({
      endpoints: all(arrayOf(sliceEndpoint(t), 1000), nonEmptyAddresses),
      ports: all(arrayOf(endpointPort(false), 20000), uniqueNames("an EndpointSlice", false)),
    }),
  ]),
) as Record<AddressType, Check>;

/** Checks an EndpointSlice's addressType, endpoints, ports and service-name label. */
export const endpointSliceCheck: Check = (obj, path) => {
  if (!isObject(obj)) return undefined;
  const typePath = child(path, "addressType");
  if (obj.addressType === undefined || obj.addressType === null || obj.addressType === "")
    return { field: typePath, message: "is required: one of IPv4, IPv6, FQDN" };
  const p =
    oneOf(addressTypes)(obj.addressType, typePath) ?? sliceBody[obj.addressType as AddressType](obj, path);
  return p ?? serviceNameLabel(obj.metadata, child(path, "metadata"));
};

const serviceName = named(dns1035Label);

/**
 * A slice's service-name label, when set, is a Service name: it can only ever address a service.
 * Its path (quoted: the label key is no identifier) is built for a failing label only.
 */
function serviceNameLabel(meta: unknown, path: string): Problem | undefined {
  const labels = isObject(meta) && isObject(meta.labels) ? meta.labels : {};
  const value = labels[SERVICE_NAME_LABEL];
  if (value === undefined || value === "" || serviceName(value, "") === undefined) return undefined;
  const at = child(child(path, "labels"), SERVICE_NAME_LABEL);
  const p = serviceName(value, at) as Problem;
  return { field: at, message: `${p.message}: the label names the Service this slice belongs to` };
}

const endpointAddress: Check = object(
  // hostname is a plain string in Go: "" means none. nodeName is a pointer: set means valid.
  { ip: ip(), hostname: named(dns1123Label, true), nodeName: named(dns1123Subdomain), targetRef },
  ["ip"],
);

const subset: Check = object({
  addresses: arrayOf(endpointAddress),
  notReadyAddresses: arrayOf(endpointAddress),
  ports: all(arrayOf(endpointPort(true)), uniqueNames("an Endpoints subset", true)),
});

/** Checks a v1 Endpoints object's subsets. */
export const endpointsCheck: Check = object({ subsets: arrayOf(subset) });
