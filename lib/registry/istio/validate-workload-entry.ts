/**
 * WorkloadEntry as istiod's validation webhook checks it (ValidateWorkloadEntry and
 * validateWorkloadEntry), with the bounds and rules of its CRD schema. The same checks serve a
 * ServiceEntry's `endpoints`, where a STATIC address must be an IP and each port name one of the
 * ServiceEntry's ports.
 */
import {
  type Check,
  child,
  integer,
  isObject,
  object,
  type Problem,
  quote,
  string,
  typeName,
} from "../check.ts";
import { istioMetadata, labelMap } from "./common.ts";
import { fqdnProblem, goIpFamily, isDns1123Label } from "./istio-names.ts";

/** The prefix of a Unix domain socket address (istiod UnixAddressPrefix). */
export const UNIX_ADDRESS_PREFIX = "unix://";

/** A string of at most `max` characters (the CRD's MaxLength). */
export const maxLength =
  (max: number): Check =>
  (v, path) =>
    string(v, path) ??
    ((v as string).length > max
      ? { field: path, message: `must be at most ${max} characters, got ${(v as string).length}` }
      : undefined);

/** istiod's ValidateFQDN as a check. */
export const fqdn: Check = (v, path) => {
  if (typeof v !== "string") return { field: path, message: `must be a string, got ${typeName(v)}` };
  const why = fqdnProblem(v);
  return why ? { field: path, message: why } : undefined;
};

/** istiod's ValidateUnixAddress on the part after `unix://`: an absolute file path, or `@name`. */
export function unixAddress(socket: string, path: string): Problem | undefined {
  if (socket === "") return { field: path, message: "unix address must not be empty" };
  if (socket.startsWith("@")) return undefined;
  if (!socket.startsWith("/") || socket.endsWith("/"))
    return { field: path, message: `${socket} is not an absolute path to a file` };
  return undefined;
}

/** Where a WorkloadEntry shape is checked: alone, or as a ServiceEntry endpoint. */
export interface WorkloadEntryRules {
  /** A hostname is a valid address (a WorkloadEntry, or a DNS ServiceEntry's endpoint). */
  allowHostname: boolean;
  /** The ServiceEntry's port names: every `ports` key must be one of them. Absent for a WorkloadEntry. */
  servicePorts?: ReadonlySet<string>;
}

const labels: Check = (v, path) =>
  isObject(v) && Object.keys(v).length > 256
    ? { field: path, message: "must have at most 256 labels" }
    : labelMap(v, path);

const fields: Check = object({
  address: maxLength(256),
  labels,
  network: maxLength(2048),
  locality: maxLength(2048),
  weight: integer(0, 4294967295),
  serviceAccount: maxLength(253),
});

/**
 * A WorkloadEntry spec (or ServiceEntry endpoint) as istiod's validateWorkloadEntry and the CRD:
 * an address unless a network is set; `unix://` addresses absolute paths or `@names`, without
 * ports; any other address an IP or (when allowed) an FQDN; port names DNS-1123 labels (and, for an
 * endpoint, ports of the ServiceEntry) with numbers 1-65535; labels valid; a Unix endpoint only on
 * a ServiceEntry with exactly one port.
 */
export const workloadEntryFields =
  (rules: WorkloadEntryRules): Check =>
  (v, path) => {
    const p = fields(v, path);
    if (p || !isObject(v)) return p;
    const address = (v.address as string | undefined) ?? "";
    const at = child(path, "address");
    if (address === "") {
      if (((v.network as string | undefined) ?? "") === "")
        return { field: at, message: "address is required" };
    } else if (address.startsWith(UNIX_ADDRESS_PREFIX)) {
      const u = unixAddress(address.slice(UNIX_ADDRESS_PREFIX.length), at);
      if (u) return u;
      // The CRD refuses a `ports` field on a Unix address, even an empty one.
      if (v.ports !== undefined && v.ports !== null)
        return { field: child(path, "ports"), message: `unix endpoint ${address} must not include ports` };
      if (rules.servicePorts && rules.servicePorts.size !== 1)
        return { field: at, message: "exactly 1 service port required for unix endpoints" };
    } else if (!goIpFamily(address)) {
      if (!rules.allowHostname)
        return { field: at, message: `endpoint address ${quote(address)} is not a valid IP address` };
      if (fqdnProblem(address))
        return {
          field: at,
          message: `endpoint address ${quote(address)} is not a valid FQDN or an IP address`,
        };
    }
    return v.ports === undefined || v.ports === null
      ? undefined
      : portMap(rules.servicePorts)(v.ports, child(path, "ports"));
  };

/** A ports map: service port name ▶ endpoint port (ValidatePortName, ValidatePort, the CRD's key syntax). */
export const portMap =
  (servicePorts?: ReadonlySet<string>): Check =>
  (v, path) => {
    if (!isObject(v))
      return { field: path, message: `must be an object of port numbers, got ${typeName(v)}` };
    const entries = Object.entries(v);
    if (entries.length > 128)
      return { field: path, message: `must have at most 128 ports, got ${entries.length}` };
    for (const [name, port] of entries) {
      const at = child(path, name);
      if (name.length >= 63 || !isDns1123Label(name))
        return { field: at, message: `invalid port name: ${name}` };
      if (servicePorts && !servicePorts.has(name))
        return { field: at, message: `endpoint port ${quote(port)} is not defined by the service entry` };
      if (!Number.isInteger(port) || (port as number) < 1 || (port as number) > 65535)
        return { field: at, message: `port number ${quote(port)} must be in the range 1..65535` };
    }
    return undefined;
  };

const workloadEntrySpec = workloadEntryFields({ allowHostname: true });

/** Checks a WorkloadEntry object's metadata annotations and `spec`. */
export const workloadEntryCheck: Check = (obj, path) => {
  if (!isObject(obj)) return undefined;
  const specPath = child(path, "spec");
  if (obj.spec === undefined || obj.spec === null) return { field: specPath, message: "is required" };
  return istioMetadata(obj, path) ?? workloadEntrySpec(obj.spec, specPath);
};
