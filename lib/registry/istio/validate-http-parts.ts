/**
 * The parts of a VirtualService HTTP route istiod validates one by one (validateHTTPFaultInjection,
 * validateHTTPMirrors, validateHTTPRedirect, validateHTTPDirectResponse, validateHTTPRetry,
 * validateHTTPRewrite): first problem only, with its field path.
 */
import { child, isObject, quote, typeName } from "../../ingest/check.ts";
import { utf8Length } from "../../utf8.ts";
import { grpcStatusCodes, retryOnPolicies, retryOnStatusCode } from "./codes.ts";
import { duration } from "./duration.ts";
import {
  destination,
  has,
  int32,
  type P,
  percentage,
  percentInt,
  portNumber,
  regex,
} from "./validate-fields.ts";

/** validateHTTPFaultInjection: abort and/or delay, percentages, a known gRPC or HTTP status, fixed delays. */
export function fault(f: unknown, path: string): P {
  if (!isObject(f)) return { field: path, message: `must be an object, got ${typeName(f)}` };
  if (!has(f, "abort") && !has(f, "delay"))
    return { field: path, message: "HTTP fault injection must have an abort and/or a delay" };
  if (has(f, "abort")) {
    const a = f.abort;
    const at = child(path, "abort");
    if (!isObject(a)) return { field: at, message: `must be an object, got ${typeName(a)}` };
    const p = has(a, "percentage") ? percentage(a.percentage, child(at, "percentage")) : undefined;
    if (p) return p;
    if (has(a, "http2Error"))
      return { field: child(at, "http2Error"), message: "HTTP/2 abort fault injection not supported yet" };
    if (has(a, "grpcStatus") && !(typeof a.grpcStatus === "string" && a.grpcStatus in grpcStatusCodes))
      return {
        field: child(at, "grpcStatus"),
        message: `gRPC status ${quote(a.grpcStatus)} is not supported; use a name such as NOT_FOUND or UNAVAILABLE`,
      };
    if (
      has(a, "httpStatus") &&
      !(Number.isInteger(a.httpStatus) && (a.httpStatus as number) >= 200 && (a.httpStatus as number) <= 600)
    )
      return {
        field: child(at, "httpStatus"),
        message: `HTTP status ${quote(a.httpStatus)} is not in range 200-599`,
      };
  }
  if (has(f, "delay")) {
    const d = f.delay;
    const at = child(path, "delay");
    if (!isObject(d)) return { field: at, message: `must be an object, got ${typeName(d)}` };
    const p =
      (has(d, "percentage") ? percentage(d.percentage, child(at, "percentage")) : undefined) ??
      (has(d, "percent") ? percentInt(d.percent, child(at, "percent")) : undefined) ??
      (has(d, "fixedDelay") ? duration(d.fixedDelay, child(at, "fixedDelay")) : undefined);
    if (p) return p;
    if (has(d, "exponentialDelay"))
      return { field: child(at, "exponentialDelay"), message: "exponentialDelay not supported yet" };
  }
  return undefined;
}

/** A mirrors entry: a valid destination and percentage. */
export function mirror(m: unknown, path: string): P {
  if (!isObject(m)) return { field: path, message: `must be an object, got ${typeName(m)}` };
  if (!has(m, "destination"))
    return { field: child(path, "destination"), message: "is required for mirrors" };
  return (
    destination(m.destination, child(path, "destination")) ??
    (has(m, "percentage") ? percentage(m.percentage, child(path, "percentage")) : undefined)
  );
}

/** validateHTTPRedirect: a target, a 3xx code, http(s) scheme, a valid port. */
export function redirect(r: unknown, path: string): P {
  if (!isObject(r)) return { field: path, message: `must be an object, got ${typeName(r)}` };
  if (!r.uri && !r.authority && !has(r, "port") && !has(r, "derivePort") && !r.scheme)
    return { field: path, message: "redirect must specify URI, authority, scheme, or port" };
  if (has(r, "redirectCode") && r.redirectCode !== 0) {
    const c = r.redirectCode;
    if (!Number.isInteger(c) || (c as number) < 300 || (c as number) > 399)
      return {
        field: child(path, "redirectCode"),
        message: `${quote(c)} is not a valid redirect code, must be 3xx`,
      };
  }
  if (r.scheme && r.scheme !== "http" && r.scheme !== "https")
    return { field: child(path, "scheme"), message: `invalid redirect scheme, must be "http" or "https"` };
  if (has(r, "port") && r.port !== 0) return portNumber(r.port, child(path, "port"));
  return undefined;
}

/** validateHTTPDirectResponse: a status 200-600 and a body under 1 MiB. */
export function directResponse(d: unknown, path: string): P {
  if (!isObject(d)) return { field: path, message: `must be an object, got ${typeName(d)}` };
  if (isObject(d.body)) {
    const b = d.body;
    const size =
      typeof b.string === "string"
        ? utf8Length(b.string)
        : typeof b.bytes === "string"
          ? Math.floor((b.bytes.length * 3) / 4)
          : 0;
    if (size > 1024 * 1024)
      return {
        field: child(path, "body"),
        message: "large direct_responses may impact control plane performance, must be less than 1MB",
      };
  }
  const s = d.status ?? 0;
  if (!Number.isInteger(s) || (s as number) < 200 || (s as number) > 600)
    return { field: child(path, "status"), message: `HTTP status ${quote(s)} is not in range 200-599` };
  return undefined;
}

/** validateHTTPRetry: attempts, perTryTimeout and retryOn policies (no retry settings with 0 attempts). */
export function retries(r: unknown, path: string): P {
  if (!isObject(r)) return { field: path, message: `must be an object, got ${typeName(r)}` };
  const attempts = r.attempts ?? 0;
  const p = int32(attempts, child(path, "attempts"));
  if (p) return p;
  if ((attempts as number) < 0)
    return { field: child(path, "attempts"), message: "attempts cannot be negative" };
  if (
    attempts === 0 &&
    (has(r, "perTryTimeout") || (r.retryOn ?? "") !== "" || has(r, "retryRemoteLocalities"))
  )
    return {
      field: child(path, "attempts"),
      message: "http retry policy configured when attempts are set to 0 (disabled)",
    };
  if (has(r, "perTryTimeout")) {
    const d = duration(r.perTryTimeout, child(path, "perTryTimeout"));
    if (d) return d;
  }
  if (has(r, "retryOn") && r.retryOn !== "") {
    const at = child(path, "retryOn");
    if (typeof r.retryOn !== "string")
      return { field: at, message: `must be a string, got ${typeName(r.retryOn)}` };
    for (const policy of r.retryOn.split(","))
      if (retryOnStatusCode(policy) === undefined && !retryOnPolicies.has(policy))
        return { field: at, message: `${quote(policy)} is not a valid retryOn policy` };
  }
  return undefined;
}

/** validateHTTPRewrite: one of uri and uriRegexRewrite (a valid RE2 match), or an authority. */
export function rewrite(r: unknown, path: string): P {
  if (!isObject(r)) return { field: path, message: `must be an object, got ${typeName(r)}` };
  if (r.uri && has(r, "uriRegexRewrite"))
    return { field: path, message: "rewrite may only contain one of URI or UriRegexRewrite" };
  if (!r.uri && !has(r, "uriRegexRewrite") && !r.authority)
    return {
      field: path,
      message: "rewrite must specify at least one of URI, UriRegexRewrite, or authority",
    };
  if (has(r, "uriRegexRewrite")) {
    const x = r.uriRegexRewrite;
    const at = child(path, "uriRegexRewrite");
    if (!isObject(x) || !x.match || !x.rewrite)
      return { field: at, message: "UriRegexRewrite requires both Rewrite and Match fields to be specified" };
    return regex(x.match, child(at, "match"));
  }
  return undefined;
}
