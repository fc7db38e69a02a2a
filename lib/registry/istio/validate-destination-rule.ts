/**
 * DestinationRule as istiod's validation webhook checks it (ValidateDestinationRule,
 * validateTrafficPolicy and its parts), first problem only, with the field path from the object:
 * host, subsets (DNS-label names, no duplicates, labels, policies), traffic policies at the top,
 * per port and per subset, exportTo and workloadSelector.
 */
import { type Check, child, isObject, oneOf, quote, typeName } from "../../ingest/check.ts";
import { labelMap, workloadSelector } from "./common.ts";
import { duration } from "./duration.ts";
import {
  eachOf,
  has,
  nonNegativeInt32,
  type P,
  percentInt,
  portNumber,
  subsetName,
  uint64,
} from "./validate-fields.ts";
import { configExportTo, hostOrIp } from "./visibility.ts";

/** LoadBalancerSettings.SimpleLB names. */
export const simpleLbs = [
  "UNSPECIFIED",
  "RANDOM",
  "PASSTHROUGH",
  "ROUND_ROBIN",
  "LEAST_REQUEST",
  "LEAST_CONN",
] as const;

/** Checks a DestinationRule object's `spec` (metadata is checked for every kind). */
export const destinationRuleCheck: Check = (obj, path) => {
  if (!isObject(obj)) return undefined;
  const specPath = child(path, "spec");
  if (!has(obj, "spec")) return { field: specPath, message: "is required" };
  const s = obj.spec;
  if (!isObject(s)) return { field: specPath, message: `must be an object, got ${typeName(s)}` };
  const meta = isObject(obj.metadata) ? obj.metadata : {};
  const namespace = typeof meta.namespace === "string" ? meta.namespace : "";
  const hostPath = child(specPath, "host");
  if (!has(s, "host")) return { field: hostPath, message: "is required" };
  const p =
    hostOrIp(s.host, hostPath, false) ??
    (has(s, "trafficPolicy")
      ? trafficPolicy(s.trafficPolicy, child(specPath, "trafficPolicy"))
      : undefined) ??
    (has(s, "subsets") ? subsets(s.subsets, child(specPath, "subsets")) : undefined) ??
    (has(s, "workloadSelector")
      ? workloadSelector(s.workloadSelector, child(specPath, "workloadSelector"))
      : undefined);
  if (p) return p;
  if (has(s, "exportTo")) {
    const at = child(specPath, "exportTo");
    const e = configExportTo(namespace)(s.exportTo, at);
    if (e) return e;
    const list = s.exportTo as string[];
    if (has(s, "workloadSelector") && list.length > 0) {
      if (list.length > 1)
        return {
          field: at,
          message: "destination rule with workload selector cannot have multiple entries in exportTo",
        };
      if (list[0] !== "." && list[0] !== namespace)
        return {
          field: at,
          message: "destination rule with workload selector cannot have exportTo beyond current namespace",
        };
    }
  }
  return undefined;
};

function subsets(v: unknown, path: string): P {
  const seen = new Set<string>();
  return eachOf(v, path, (s, at) => {
    if (!isObject(s)) return { field: at, message: `must be an object, got ${typeName(s)}` };
    const namePath = child(at, "name");
    const name = s.name ?? "";
    const p = subsetName(name, namePath);
    if (p) return p;
    if (seen.has(name as string))
      return { field: namePath, message: `duplicate subset names: ${quote(name)}` };
    seen.add(name as string);
    return (
      (has(s, "labels") ? labelMap(s.labels, child(at, "labels")) : undefined) ??
      (has(s, "trafficPolicy") ? trafficPolicy(s.trafficPolicy, child(at, "trafficPolicy")) : undefined)
    );
  });
}

const policyParts = ["outlierDetection", "connectionPool", "loadBalancer", "tls"] as const;

/** validateTrafficPolicy: at least one field; tunnel and proxyProtocol not together; each part valid. */
export function trafficPolicy(v: unknown, path: string): P {
  if (!isObject(v)) return { field: path, message: `must be an object, got ${typeName(v)}` };
  if (![...policyParts, "portLevelSettings", "tunnel", "proxyProtocol"].some((k) => has(v, k)))
    return { field: path, message: "traffic policy must have at least one field" };
  if (has(v, "tunnel") && has(v, "proxyProtocol"))
    return { field: path, message: "tunnel and proxyProtocol must not be set together" };
  const p = parts(v, path);
  if (p) return p;
  if (has(v, "portLevelSettings"))
    return eachOf(v.portLevelSettings, child(path, "portLevelSettings"), (pl, at) => {
      if (!isObject(pl)) return { field: at, message: `must be an object, got ${typeName(pl)}` };
      if (!isObject(pl.port))
        return { field: child(at, "port"), message: "portTrafficPolicy must have valid port" };
      const q = portNumber(pl.port.number ?? 0, child(child(at, "port"), "number"));
      if (q) return q;
      if (!policyParts.some((k) => has(pl, k)))
        return { field: at, message: "port traffic policy must have at least one field" };
      return parts(pl, at);
    });
  if (has(v, "proxyProtocol") && isObject(v.proxyProtocol)) {
    const version = v.proxyProtocol.version ?? "V1";
    if (version !== "V1" && version !== "V2" && version !== 0 && version !== 1)
      return {
        field: child(child(path, "proxyProtocol"), "version"),
        message: `proxy protocol version is invalid: ${quote(version)}`,
      };
  }
  return undefined;
}

function parts(v: Record<string, unknown>, path: string): P {
  return (
    (has(v, "outlierDetection")
      ? outlierDetection(v.outlierDetection, child(path, "outlierDetection"))
      : undefined) ??
    (has(v, "connectionPool")
      ? connectionPool(v.connectionPool, child(path, "connectionPool"))
      : undefined) ??
    (has(v, "loadBalancer") ? loadBalancer(v.loadBalancer, child(path, "loadBalancer")) : undefined) ??
    (has(v, "tls") && !isObject(v.tls)
      ? { field: child(path, "tls"), message: `must be an object, got ${typeName(v.tls)}` }
      : undefined)
  );
}

function fields(v: Record<string, unknown>, path: string, checks: Record<string, Check>): P {
  for (const [k, check] of Object.entries(checks)) {
    if (!has(v, k)) continue;
    const p = check(v[k], child(path, k));
    if (p) return p;
  }
  return undefined;
}

function outlierDetection(v: unknown, path: string): P {
  if (!isObject(v)) return { field: path, message: `must be an object, got ${typeName(v)}` };
  const p = fields(v, path, {
    baseEjectionTime: duration,
    interval: duration,
    maxEjectionPercent: percentInt,
    minHealthPercent: percentInt,
    consecutive5xxErrors: nonNegativeInt32,
    consecutiveGatewayErrors: nonNegativeInt32,
    consecutiveErrors: nonNegativeInt32,
    consecutiveLocalOriginFailures: nonNegativeInt32,
  });
  if (p) return p;
  if (
    !v.splitExternalLocalOriginErrors &&
    ((v.consecutiveLocalOriginFailures as number | undefined) ?? 0) > 0
  )
    return {
      field: child(path, "consecutiveLocalOriginFailures"),
      message:
        "outlier detection consecutive local origin failures is specified, but split external local origin errors is set to false",
    };
  return undefined;
}

function connectionPool(v: unknown, path: string): P {
  if (!isObject(v)) return { field: path, message: `must be an object, got ${typeName(v)}` };
  if (!has(v, "http") && !has(v, "tcp"))
    return { field: path, message: "connection pool must have at least one field" };
  if (has(v, "http")) {
    const h = v.http;
    const at = child(path, "http");
    if (!isObject(h)) return { field: at, message: `must be an object, got ${typeName(h)}` };
    const p = fields(h, at, {
      http1MaxPendingRequests: nonNegativeInt32,
      http2MaxRequests: nonNegativeInt32,
      maxRequestsPerConnection: nonNegativeInt32,
      maxRetries: nonNegativeInt32,
      maxConcurrentStreams: nonNegativeInt32,
      idleTimeout: duration,
      h2UpgradePolicy: oneOf(["DEFAULT", "DO_NOT_UPGRADE", "UPGRADE"]),
    });
    if (p) return p;
    if (h.h2UpgradePolicy === "UPGRADE" && h.useClientProtocol === true)
      return {
        field: child(at, "useClientProtocol"),
        message: "use client protocol must not be true when H2UpgradePolicy is UPGRADE",
      };
  }
  if (has(v, "tcp")) {
    const t = v.tcp;
    const at = child(path, "tcp");
    if (!isObject(t)) return { field: at, message: `must be an object, got ${typeName(t)}` };
    const p = fields(t, at, {
      maxConnections: nonNegativeInt32,
      connectTimeout: duration,
      maxConnectionDuration: duration,
      idleTimeout: duration,
    });
    if (p) return p;
    if (has(t, "tcpKeepalive")) {
      const ka = t.tcpKeepalive;
      const kat = child(at, "tcpKeepalive");
      if (!isObject(ka)) return { field: kat, message: `must be an object, got ${typeName(ka)}` };
      return fields(ka, kat, { time: duration, interval: duration });
    }
  }
  return undefined;
}

function loadBalancer(v: unknown, path: string): P {
  if (!isObject(v)) return { field: path, message: `must be an object, got ${typeName(v)}` };
  if (has(v, "simple") && has(v, "consistentHash"))
    return { field: path, message: "must set only one of simple, consistentHash" };
  const p = fields(v, path, { simple: oneOf(simpleLbs), warmupDurationSecs: duration });
  if (p) return p;
  if (!has(v, "consistentHash")) return undefined;
  const ch = v.consistentHash;
  const at = child(path, "consistentHash");
  if (!isObject(ch)) return { field: at, message: `must be an object, got ${typeName(ch)}` };
  const keys = ["httpHeaderName", "httpCookie", "useSourceIp", "httpQueryParameterName"].filter((k) =>
    has(ch, k),
  );
  if (keys.length > 1) return { field: at, message: `must set only one hash key, got ${keys.join(", ")}` };
  if (has(ch, "httpCookie") && !(isObject(ch.httpCookie) && ch.httpCookie.name))
    return { field: child(child(at, "httpCookie"), "name"), message: "name required for HttpCookie" };
  if (has(ch, "httpHeaderName") && (typeof ch.httpHeaderName !== "string" || ch.httpHeaderName === ""))
    return { field: child(at, "httpHeaderName"), message: "must be a non-empty header name" };
  const q = fields(ch, at, { minimumRingSize: uint64 });
  if (q) return q;
  const ringSize = Number(ch.minimumRingSize ?? 0);
  if (ringSize !== 0 && (has(ch, "ringHash") || has(ch, "maglev")))
    return {
      field: child(at, "minimumRingSize"),
      message: "only one of MinimumRingSize or Maglev/Ringhash can be specified",
    };
  if (has(ch, "ringHash") && has(ch, "maglev"))
    return { field: at, message: "must set only one of ringHash, maglev" };
  if (has(ch, "ringHash")) {
    const rh = ch.ringHash;
    const rat = child(at, "ringHash");
    if (!isObject(rh)) return { field: rat, message: `must be an object, got ${typeName(rh)}` };
    return fields(rh, rat, { minimumRingSize: uint64 });
  }
  if (has(ch, "maglev")) {
    const ml = ch.maglev;
    const mat = child(at, "maglev");
    if (!isObject(ml)) return { field: mat, message: `must be an object, got ${typeName(ml)}` };
    const tat = child(mat, "tableSize");
    const q2 = uint64(ml.tableSize ?? 0, tat);
    if (q2) return q2;
    const size = Number(ml.tableSize ?? 0);
    if (size === 0) return { field: tat, message: "tableSize must be set for maglev" };
    if (size >= 5000011) return { field: tat, message: "tableSize must be less than 5000011 for maglev" };
    if (!isPrime(size)) return { field: tat, message: "tableSize must be a prime number for maglev" };
  }
  return undefined;
}

/** Envoy's isPrime, as istiod copies it (1, 2 and 3 count as prime). */
function isPrime(x: number): boolean {
  if (x !== 0 && x < 4) return true;
  if (x % 2 === 0) return false;
  for (let f = 3; f * f <= x; f += 2) if (x % f === 0) return false;
  return true;
}
