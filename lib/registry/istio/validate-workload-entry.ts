/**
 * WorkloadEntry as istiod's validation webhook checks it (pkg/config/validation ValidateWorkloadEntry
 * and validateWorkloadEntry), with the bounds of its CRD schema. The same field checks serve a
 * ServiceEntry's `endpoints` (STATIC resolution), where the address must be an IP and each port
 * name one of the ServiceEntry's ports.
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
} from "../../ingest/check.ts";
import { parseIp } from "../../ingest/ip.ts";
import { dns1123Label } from "../../ingest/names.ts";
import { labelMap } from "./common.ts";

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

/**
 * istiod's ValidateFQDN: at most 255 characters, not empty, the last label not all digits, every
 * label a DNS-1123 label (the last may be empty: `istio.io.`). A single label passes, as in istiod.
 */
export const fqdn: Check = (v, path) => {
  if (typeof v !== "string") return { field: path, message: `must be a string, got ${typeName(v)}` };
  if (v === "") return { field: path, message: "empty domain name not allowed" };
  if (v.length > 255) return { field: path, message: `domain name ${quote(v)} too long (max 255)` };
  const labels = v.split(".");
  const top = labels[labels.length - 1] as string;
  if (/^[+-]?[0-9]+$/.test(top))
    return {
      field: path,
      message: `domain name ${quote(v)} invalid (top level domain ${quote(top)} is all digits)`,
    };
  for (let i = 0; i < labels.length; i++) {
    const label = labels[i] as string;
    if (i === labels.length - 1 && label === "" && i > 0) break;
    const why = label === "" ? "must not be empty" : dns1123Label(label);
    if (why) return { field: path, message: `domain name ${quote(v)} invalid: label ${quote(label)} ${why}` };
  }
  return undefined;
};

/** istiod's ValidateUnixAddress on the part after `unix://`: an absolute file path, or `@name`. */
function unixAddress(socket: string, path: string): Problem | undefined {
  if (socket === "") return { field: path, message: "unix address must not be empty" };
  if (socket.startsWith("@")) return undefined;
  if (!socket.startsWith("/") || socket.endsWith("/"))
    return { field: path, message: `${quote(socket)} is not an absolute path to a file` };
  return undefined;
}

/** Where a WorkloadEntry shape is checked: alone, or as a ServiceEntry endpoint. */
export interface WorkloadEntryRules {
  /** A hostname is a valid address (a WorkloadEntry, or a DNS ServiceEntry's endpoint). */
  allowHostname: boolean;
  /** The ServiceEntry's port names: every `ports` key must be one of them. Absent for a WorkloadEntry. */
  servicePorts?: ReadonlySet<string>;
}

const fields: Check = object({
  address: maxLength(256),
  labels: labelMap,
  network: maxLength(2048),
  locality: maxLength(2048),
  weight: integer(0, 4294967295),
  serviceAccount: maxLength(253),
});

/**
 * A WorkloadEntry spec (or ServiceEntry endpoint) as istiod's validateWorkloadEntry: an address is
 * required unless a network is set; `unix://` addresses must be absolute paths and carry no ports;
 * any other address an IP, or (when allowed) an FQDN; port names DNS-1123 labels (and, for an
 * endpoint, ports of the ServiceEntry) with numbers 1-65535; labels valid; a Unix endpoint only
 * on a ServiceEntry with exactly one port.
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
        return {
          field: at,
          message: "address is required (or a network, for an endpoint behind its gateway)",
        };
    } else if (address.startsWith(UNIX_ADDRESS_PREFIX)) {
      const u = unixAddress(address.slice(UNIX_ADDRESS_PREFIX.length), at);
      if (u) return u;
      if (isObject(v.ports) && Object.keys(v.ports).length > 0)
        return {
          field: child(path, "ports"),
          message: `unix endpoint ${quote(address)} must not include ports`,
        };
      if (rules.servicePorts && rules.servicePorts.size !== 1)
        return { field: at, message: "exactly 1 service port required for unix endpoints" };
    } else if (!parseIp(address).ok) {
      if (!rules.allowHostname)
        return { field: at, message: `endpoint address ${quote(address)} is not a valid IP address` };
      if (fqdn(address, at))
        return {
          field: at,
          message: `endpoint address ${quote(address)} is not a valid FQDN or an IP address`,
        };
    }
    return v.ports === undefined || v.ports === null
      ? undefined
      : portMap(rules.servicePorts)(v.ports, child(path, "ports"));
  };

/** A ports map: service port name ▶ endpoint port (istiod ValidatePortName and ValidatePort). */
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
      const bad = dns1123Label(name);
      if (bad) return { field: at, message: `invalid port name ${quote(name)}: ${bad}` };
      if (servicePorts && !servicePorts.has(name))
        return { field: at, message: `endpoint port ${quote(name)} is not defined by the service entry` };
      if (!Number.isInteger(port) || (port as number) < 1 || (port as number) > 65535)
        return { field: at, message: `port number ${quote(port)} must be in the range 1..65535` };
    }
    return undefined;
  };

const workloadEntrySpec = workloadEntryFields({ allowHostname: true });

/** Checks a WorkloadEntry object's `spec` (metadata is checked for every kind). */
export const workloadEntryCheck: Check = (obj, path) => {
  if (!isObject(obj)) return undefined;
  const specPath = child(path, "spec");
  if (obj.spec === undefined || obj.spec === null) return { field: specPath, message: "is required" };
  return workloadEntrySpec(obj.spec, specPath);
};
