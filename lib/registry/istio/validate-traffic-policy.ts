/**
 * A TrafficPolicy as istiod checks it (validateTrafficPolicy and its parts: validateOutlierDetection,
 * validateConnectionPool, agent.ValidateTLS, validatePortTrafficPolicies, validateTunnelSettings,
 * validateProxyProtocol) with the CRD's bounds; load balancers in validate-load-balancer.ts. Every
 * field is checked as istiod checks it, whether or not edgepilot implements it.
 */
import { child, isObject, oneOf, quote } from "../check.ts";
import { anyDuration, duration, durationNanos } from "./duration.ts";
import { fqdnProblem, goIpFamily } from "./istio-names.ts";
import {
  double,
  eachOf,
  fields,
  has,
  int32,
  nonNegative,
  objectProblem,
  type P,
  percentInt,
  portNumber,
  str,
  uint32,
} from "./validate-fields.ts";
import { loadBalancer } from "./validate-load-balancer.ts";

const policyKeys = [
  "outlierDetection",
  "connectionPool",
  "loadBalancer",
  "tls",
  "portLevelSettings",
  "tunnel",
  "proxyProtocol",
  "retryBudget",
];

/** validateTrafficPolicy for a config in `namespace` (a `configmap://` credential must be in it). */
export function trafficPolicy(v: unknown, path: string, namespace: string): P {
  if (!isObject(v)) return objectProblem(v, path);
  if (
    !policyKeys.some((k) => (k === "portLevelSettings" ? Array.isArray(v[k]) && v[k].length > 0 : has(v, k)))
  )
    return { field: path, message: "traffic policy must have at least one field" };
  if (has(v, "tunnel") && has(v, "proxyProtocol"))
    return { field: path, message: "tunnel and proxyProtocol must not be set together" };
  if (Array.isArray(v.portLevelSettings) && v.portLevelSettings.length > 4096)
    return { field: child(path, "portLevelSettings"), message: "must have at most 4096 items" };
  const p =
    parts(v, path, namespace) ??
    (has(v, "portLevelSettings")
      ? eachOf(v.portLevelSettings, child(path, "portLevelSettings"), (pl, at) => {
          if (!isObject(pl)) return objectProblem(pl, at);
          if (!has(pl, "port"))
            return { field: child(at, "port"), message: "portTrafficPolicy must have valid port" };
          const q =
            objectProblem(pl.port, child(at, "port")) ??
            fields(pl.port as Record<string, unknown>, child(at, "port"), { number: uint32 });
          if (q) return q;
          if (!["outlierDetection", "connectionPool", "loadBalancer", "tls"].some((k) => has(pl, k)))
            return { field: at, message: "port traffic policy must have at least one field" };
          return parts(pl, at, namespace);
        })
      : undefined);
  if (p) return p;
  return (
    (has(v, "tunnel") ? tunnel(v.tunnel, child(path, "tunnel")) : undefined) ??
    (has(v, "proxyProtocol") ? proxyProtocol(v.proxyProtocol, child(path, "proxyProtocol")) : undefined) ??
    (has(v, "retryBudget") ? retryBudget(v.retryBudget, child(path, "retryBudget")) : undefined)
  );
}

function parts(v: Record<string, unknown>, path: string, namespace: string): P {
  return (
    (has(v, "outlierDetection")
      ? outlierDetection(v.outlierDetection, child(path, "outlierDetection"))
      : undefined) ??
    (has(v, "connectionPool")
      ? connectionPool(v.connectionPool, child(path, "connectionPool"))
      : undefined) ??
    (has(v, "loadBalancer") ? loadBalancer(v.loadBalancer, child(path, "loadBalancer")) : undefined) ??
    (has(v, "tls") ? clientTls(v.tls, child(path, "tls"), namespace) : undefined)
  );
}

/** validateOutlierDetection. */
function outlierDetection(v: unknown, path: string): P {
  if (!isObject(v)) return objectProblem(v, path);
  const p = fields(v, path, {
    baseEjectionTime: duration,
    interval: duration,
    maxEjectionPercent: percentInt,
    minHealthPercent: percentInt,
    consecutive5xxErrors: uint32,
    consecutiveGatewayErrors: uint32,
    consecutiveErrors: int32,
    consecutiveLocalOriginFailures: uint32,
  });
  if (p) return p;
  if (
    v.splitExternalLocalOriginErrors !== true &&
    ((v.consecutiveLocalOriginFailures as number | undefined) ?? 0) > 0
  )
    return {
      field: child(path, "consecutiveLocalOriginFailures"),
      message:
        "outlier detection consecutive local origin failures is specified, but split external local origin errors is set to false",
    };
  return undefined;
}

/** validateConnectionPool: http and/or tcp settings; a TCP idle timeout of 0 means none. */
export function connectionPool(v: unknown, path: string): P {
  if (!isObject(v)) return objectProblem(v, path);
  if (!has(v, "http") && !has(v, "tcp"))
    return { field: path, message: "connection pool must have at least one field" };
  if (has(v, "http")) {
    const h = v.http;
    const at = child(path, "http");
    if (!isObject(h)) return objectProblem(h, at);
    const p = fields(h, at, {
      http1MaxPendingRequests: nonNegative("http1 max pending requests"),
      http2MaxRequests: nonNegative("http2 max requests"),
      maxRequestsPerConnection: nonNegative("max requests per connection"),
      maxRetries: nonNegative("max retries"),
      idleTimeout: duration,
      maxConcurrentStreams: nonNegative("max concurrent streams"),
    });
    if (p) return p;
    const upgrade = has(h, "h2UpgradePolicy")
      ? oneOf(["DEFAULT", "DO_NOT_UPGRADE", "UPGRADE"])(h.h2UpgradePolicy, child(at, "h2UpgradePolicy"))
      : undefined;
    if (upgrade) return upgrade;
    if (h.h2UpgradePolicy === "UPGRADE" && h.useClientProtocol === true)
      return {
        field: child(at, "useClientProtocol"),
        message: "use client protocol must not be true when H2UpgradePolicy is UPGRADE",
      };
  }
  if (!has(v, "tcp")) return undefined;
  const t = v.tcp;
  const at = child(path, "tcp");
  if (!isObject(t)) return objectProblem(t, at);
  const p = fields(t, at, {
    maxConnections: nonNegative("max connections"),
    connectTimeout: duration,
    maxConnectionDuration: duration,
    idleTimeout: anyDuration,
  });
  if (p) return p;
  // 0 (as Go's Duration.Milliseconds() truncates it) disables the timeout; anything else is a duration.
  if (typeof t.idleTimeout === "string" && (durationNanos(t.idleTimeout) ?? 0n) / 1_000_000n !== 0n) {
    const q = duration(t.idleTimeout, child(at, "idleTimeout"));
    if (q) return q;
  }
  if (!has(t, "tcpKeepalive")) return undefined;
  const kat = child(at, "tcpKeepalive");
  return (
    objectProblem(t.tcpKeepalive, kat) ??
    fields(t.tcpKeepalive as Record<string, unknown>, kat, {
      time: duration,
      interval: duration,
      probes: uint32,
    })
  );
}

const tlsModes = ["DISABLE", "SIMPLE", "MUTUAL", "ISTIO_MUTUAL"];

/** agent.ValidateTLS: credentials, certificates and insecureSkipVerify that fit the mode. */
function clientTls(v: unknown, path: string, namespace: string): P {
  if (!isObject(v)) return objectProblem(v, path);
  const unknown = has(v, "mode") ? oneOf(tlsModes)(v.mode, child(path, "mode")) : undefined;
  if (unknown) return unknown;
  const mode = str(v, "mode");
  const credential = str(v, "credentialName");
  if (credential.startsWith("configmap://")) {
    const [ns, name] = credential.slice("configmap://".length).split("/");
    if (name === undefined || ns === "" || name === "")
      return {
        field: child(path, "credentialName"),
        message: `invalid configmap:// credentialName: invalid resource name "${credential}"`,
      };
    if (ns !== namespace || namespace === "")
      return {
        field: child(path, "credentialName"),
        message: `invalid configmap:// credentialName: namespace must match the configuration namespace "${namespace}"`,
      };
  }
  const ca = str(v, "caCertificates");
  const sans = Array.isArray(v.subjectAltNames) && v.subjectAltNames.length > 0;
  if (v.insecureSkipVerify === true) {
    if (mode === "SIMPLE" && (ca !== "" || credential !== "" || sans))
      return {
        field: path,
        message:
          "cannot specify CaCertificates or CredentialName or SubjectAltNames when InsecureSkipVerify is set true",
      };
    if (mode === "MUTUAL" && (ca !== "" || sans))
      return {
        field: path,
        message: "cannot specify CaCertificates or SubjectAltNames when InsecureSkipVerify is set true",
      };
  }
  if ((mode === "SIMPLE" || mode === "MUTUAL") && credential !== "") {
    if (
      str(v, "clientCertificate") !== "" ||
      ca !== "" ||
      str(v, "privateKey") !== "" ||
      str(v, "caCrl") !== ""
    )
      return {
        field: path,
        message: "cannot specify client certificates or CA certificate or CA CRL If credentialName is set",
      };
    return undefined;
  }
  if (mode === "MUTUAL") {
    if (str(v, "clientCertificate") === "")
      return {
        field: child(path, "clientCertificate"),
        message: "client certificate required for mutual tls",
      };
    if (str(v, "privateKey") === "")
      return { field: child(path, "privateKey"), message: "private key required for mutual tls" };
  }
  return undefined;
}

/** validateTunnelSettings: CONNECT or POST, a target host (FQDN or IP) and port. */
function tunnel(v: unknown, path: string): P {
  if (!isObject(v)) return objectProblem(v, path);
  for (const k of ["targetHost", "targetPort"])
    if (!has(v, k)) return { field: child(path, k), message: "is required" };
  const protocol = str(v, "protocol");
  if (protocol !== "" && protocol !== "CONNECT" && protocol !== "POST")
    return { field: child(path, "protocol"), message: `tunnel protocol must be "CONNECT" or "POST"` };
  const host = str(v, "targetHost");
  const why = fqdnProblem(host);
  if (why && !goIpFamily(host))
    return {
      field: child(path, "targetHost"),
      message: `tunnel target host must be valid FQDN or IP address: ${why}; ${host} is not a valid IP`,
    };
  const at = child(path, "targetPort");
  const p = uint32(v.targetPort, at) ?? portNumber(v.targetPort, at);
  return p ? { field: at, message: `tunnel target port is invalid: ${p.message}` } : undefined;
}

/** validateProxyProtocol (the CRD: V1 or V2). */
function proxyProtocol(v: unknown, path: string): P {
  if (!isObject(v)) return objectProblem(v, path);
  const version = v.version ?? "V1";
  if (version !== "V1" && version !== "V2" && version !== 0 && version !== 1)
    return { field: child(path, "version"), message: `proxy protocol version is invalid: ${quote(version)}` };
  return undefined;
}

/** retryBudget: the CRD's bounds (percent 0-100, minRetryConcurrency a uint32). */
function retryBudget(v: unknown, path: string): P {
  if (!isObject(v)) return objectProblem(v, path);
  const p = fields(v, path, { percent: double, minRetryConcurrency: uint32 });
  if (p) return p;
  const pct = (v.percent as number | undefined) ?? 0;
  return pct < 0 || pct > 100 ? { field: child(path, "percent"), message: "must be 0-100" } : undefined;
}
