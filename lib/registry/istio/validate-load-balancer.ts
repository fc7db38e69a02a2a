/**
 * LoadBalancerSettings as istiod checks them (validateLoadBalancer, ValidateLocalityLbSetting,
 * validateLocalities) with the CRD's bounds: simple or consistent hash, one hash key and one hash
 * algorithm, a prime maglev table, cookie attributes, locality distribute and failover, warmup.
 */
import { child, isObject, oneOf } from "../check.ts";
import { anyDuration, crdDuration, duration } from "./duration.ts";
import {
  atMostOneOf,
  double,
  eachOf,
  fields,
  has,
  objectProblem,
  type P,
  str,
  uint32,
  uint64,
} from "./validate-fields.ts";

/** LoadBalancerSettings.SimpleLB names. */
export const simpleLbs = [
  "UNSPECIFIED",
  "RANDOM",
  "PASSTHROUGH",
  "ROUND_ROBIN",
  "LEAST_REQUEST",
  "LEAST_CONN",
] as const;

/** validateLoadBalancer; `outlier` is the same policy's outlierDetection (failover wants one). */
export function loadBalancer(v: unknown, path: string): P {
  if (!isObject(v)) return objectProblem(v, path);
  const p =
    atMostOneOf(v, path, ["simple", "consistentHash"]) ??
    (has(v, "simple") ? oneOf(simpleLbs)(v.simple, child(path, "simple")) : undefined) ??
    (has(v, "consistentHash")
      ? consistentHash(v.consistentHash, child(path, "consistentHash"))
      : undefined) ??
    (has(v, "localityLbSetting")
      ? locality(v.localityLbSetting, child(path, "localityLbSetting"))
      : undefined) ??
    fields(v, path, { warmupDurationSecs: crdDuration });
  if (p || !has(v, "warmup")) return p;
  const w = v.warmup;
  const at = child(path, "warmup");
  if (!isObject(w)) return objectProblem(w, at);
  if (!has(w, "duration")) return { field: child(at, "duration"), message: "duration is required" };
  const q = fields(w, at, { duration, minimumPercent: double, aggression: double });
  if (q) return q;
  if (
    ((w.minimumPercent as number | undefined) ?? 0) > 100 ||
    ((w.minimumPercent as number | undefined) ?? 0) < 0
  )
    return {
      field: child(at, "minimumPercent"),
      message: "minimumPercent value should be less than or equal to 100",
    };
  if (has(w, "aggression") && (w.aggression as number) < 1)
    return { field: child(at, "aggression"), message: "aggression should be greater than or equal to 1" };
  return undefined;
}

function consistentHash(ch: unknown, path: string): P {
  if (!isObject(ch)) return objectProblem(ch, path);
  const p =
    atMostOneOf(ch, path, ["httpHeaderName", "httpCookie", "useSourceIp", "httpQueryParameterName"]) ??
    atMostOneOf(ch, path, ["ringHash", "maglev"]) ??
    fields(ch, path, { minimumRingSize: uint64 });
  if (p) return p;
  if (has(ch, "httpCookie")) {
    const c = ch.httpCookie;
    const at = child(path, "httpCookie");
    if (!isObject(c)) return objectProblem(c, at);
    if (str(c, "name") === "") return { field: child(at, "name"), message: "name required for HttpCookie" };
    const q = fields(c, at, { ttl: anyDuration });
    if (q) return q;
    const names = new Set<string>();
    const r = has(c, "attributes")
      ? eachOf(c.attributes, child(at, "attributes"), (a, ap) => {
          if (!isObject(a)) return objectProblem(a, ap);
          const name = str(a, "name");
          if (name === "")
            return { field: child(ap, "name"), message: "cookie attribute name cannot be empty" };
          if (names.has(name))
            return { field: child(ap, "name"), message: `duplicate cookie attribute name: ${name}` };
          names.add(name);
          return undefined;
        })
      : undefined;
    if (r) return r;
  }
  if (Number(ch.minimumRingSize ?? 0) !== 0 && (has(ch, "ringHash") || has(ch, "maglev")))
    return {
      field: child(path, "minimumRingSize"),
      message: "only one of MinimumRingSize or Maglev/Ringhash can be specified",
    };
  if (has(ch, "ringHash")) {
    const at = child(path, "ringHash");
    return (
      objectProblem(ch.ringHash, at) ??
      fields(ch.ringHash as Record<string, unknown>, at, { minimumRingSize: uint64 })
    );
  }
  if (!has(ch, "maglev")) return undefined;
  const ml = ch.maglev;
  const at = child(path, "maglev");
  if (!isObject(ml)) return objectProblem(ml, at);
  const tat = child(at, "tableSize");
  const q = uint64(ml.tableSize ?? 0, tat);
  if (q) return q;
  const size = Number(ml.tableSize ?? 0);
  if (size === 0) return { field: tat, message: "tableSize must be set for maglev" };
  if (size >= 5000011) return { field: tat, message: "tableSize must be less than 5000011 for maglev" };
  if (!isPrime(size)) return { field: tat, message: "tableSize must be a prime number for maglev" };
  return undefined;
}

/** Envoy's isPrime, as istiod copies it (1, 2 and 3 count as prime). */
function isPrime(x: number): boolean {
  if (x !== 0 && x < 4) return true;
  if (x % 2 === 0) return false;
  for (let f = 3; f * f <= x; f += 2) if (x % f === 0) return false;
  return true;
}

const topologyLabels = new Set([
  "topology.kubernetes.io/region",
  "topology.kubernetes.io/zone",
  "topology.istio.io/subzone",
]);

/** ValidateLocalityLbSetting: distribute (weights 1-100 summing to 100, localities) or failover (regions). */
function locality(lb: unknown, path: string): P {
  if (!isObject(lb)) return objectProblem(lb, path);
  const distribute = Array.isArray(lb.distribute) ? lb.distribute : [];
  const failover = Array.isArray(lb.failover) ? lb.failover : [];
  const priority = Array.isArray(lb.failoverPriority) ? lb.failoverPriority : [];
  if (distribute.length > 0 && failover.length > 0)
    return { field: path, message: "can not simultaneously specify 'distribute' and 'failover'" };
  if (failover.length > 0)
    for (const l of priority)
      if (topologyLabels.has(l as string))
        return {
          field: child(path, "failoverPriority"),
          message: `can not simultaneously set 'failover' and topology label '${l}' in 'failover_priority'`,
        };
  const dp = child(path, "distribute");
  const p = eachOf(lb.distribute ?? [], dp, (d, at) => {
    if (!isObject(d)) return objectProblem(d, at);
    const to = d.to ?? {};
    if (!isObject(to)) return objectProblem(to, child(at, "to"));
    let total = 0;
    for (const [loc, w] of Object.entries(to)) {
      const q = uint32(w, child(child(at, "to"), loc));
      if (q) return q;
      if ((w as number) <= 0 || (w as number) > 100)
        return { field: child(child(at, "to"), loc), message: "locality weight must be in range [1, 100]" };
      total += w as number;
    }
    if (total !== 100) return { field: child(at, "to"), message: `total locality weight ${total} != 100` };
    const why = localitiesProblem(Object.keys(to));
    return why ? { field: child(at, "to"), message: why } : undefined;
  });
  if (p) return p;
  const src = localitiesProblem(distribute.map((d) => (isObject(d) ? str(d, "from") : "")));
  if (src) return { field: dp, message: src };
  return eachOf(lb.failover ?? [], child(path, "failover"), (f, at) => {
    if (!isObject(f)) return objectProblem(f, at);
    const [from, to] = [str(f, "from"), str(f, "to")];
    if (from === to)
      return { field: at, message: "locality lb failover settings must specify different regions" };
    if (from.includes("/") || to.includes("/"))
      return { field: at, message: "locality lb failover only specify region" };
    if (from.includes("*") || to.includes("*"))
      return { field: at, message: "locality lb failover region should not contain '*' wildcard" };
    return undefined;
  });
}

/** validateLocalities: `region[/zone[/subzone]]`, a trailing `*` at most, none overlapping another. */
function localitiesProblem(localities: readonly string[]): string | undefined {
  const seen = new Map<string, Map<string, Set<string>>>();
  for (const l of localities) {
    const stars = l.split("*").length - 1;
    if (stars > 1 || (stars === 1 && !l.endsWith("*")))
      return `locality ${l} wildcard '*' number can not exceed 1 and must be in the end`;
    if (seen.has("*")) return `locality ${l} overlap with previous specified ones`;
    const items = splitN(l, "/", 3);
    if (items.some((x) => x === "")) return `locality ${l} must not contain empty region/zone/subzone info`;
    const [region, zone, sub] = items as [string, string?, string?];
    const overlap = `locality ${l} overlap with previous specified ones`;
    const zones = seen.get(region);
    if (zone === undefined) {
      if (zones) return overlap;
      seen.set(region, new Map([["*", new Set(["*"])]]));
    } else if (sub === undefined) {
      if (zones?.has("*") || zones?.has(zone)) return overlap;
      if (zones) zones.set(zone, new Set(["*"]));
      else seen.set(region, new Map([[zone, new Set(["*"])]]));
    } else {
      if (zones?.has("*")) return overlap;
      const subs = zones?.get(zone);
      if (subs?.has("*") || subs?.has(sub)) return overlap;
      if (subs) subs.add(sub);
      else if (zones) zones.set(zone, new Set([sub]));
      else seen.set(region, new Map([[zone, new Set([sub])]]));
    }
  }
  return undefined;
}

/** Go's strings.SplitN. */
function splitN(s: string, sep: string, n: number): string[] {
  const parts = s.split(sep);
  return parts.length <= n ? parts : [...parts.slice(0, n - 1), parts.slice(n - 1).join(sep)];
}
