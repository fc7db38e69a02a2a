/**
 * v1 Pod as the API server validates it (pkg/apis/core/validation), for the fields the registry
 * reads: the node and service account it runs as, its phase, its IPs (each a valid IP; two
 * only for dual-stack, one per family) and its conditions (type and status True/False/Unknown). Status may be absent (a pod not scheduled yet); spec is
 * read only for names, so a partial object without it is taken.
 */

import { parseIp } from "../model/ip.ts";
import {
  arrayOf,
  type Check,
  child,
  ip,
  isObject,
  named,
  object,
  oneOf,
  type Problem,
  quote,
  string,
} from "../registry/check.ts";
import { dns1123Subdomain } from "../registry/names.ts";

const spec = object({
  nodeName: named(dns1123Subdomain, true),
  serviceAccountName: named(dns1123Subdomain, true),
  serviceAccount: named(dns1123Subdomain, true),
});

const status = object({
  phase: oneOf(["Pending", "Running", "Succeeded", "Failed", "Unknown"]),
  podIP: (v, path) => (v === "" ? undefined : ip()(v, path)),
  podIPs: arrayOf(object({ ip: ip() }, ["ip"])),
  conditions: arrayOf(
    object({ type: string, status: oneOf(["True", "False", "Unknown"]) }, ["type", "status"]),
  ),
});

/** Checks a Pod's spec and status fields that the registry reads. */
export const podCheck: Check = (obj, path) => {
  if (!isObject(obj)) return undefined;
  const p = object({ spec, status })(obj, path);
  if (p || !isObject(obj.status)) return p;
  return podIps(obj.status.podIPs as { ip: string }[] | undefined, child(child(path, "status"), "podIPs"));
};

function podIps(list: { ip: string }[] | undefined, path: string): Problem | undefined {
  if (!list || list.length < 2) return undefined;
  if (list.length > 2)
    return { field: path, message: `may hold at most 2 IPs (one per IP family), got ${list.length}` };
  const [a, b] = list.map((p) => parseIp(p.ip));
  if (a?.ok && b?.ok && a.family === b.family)
    return {
      field: `${path}[1].ip`,
      message: `${quote(list[1]?.ip)}: may specify no more than one IP for each IP family`,
    };
  return undefined;
}
