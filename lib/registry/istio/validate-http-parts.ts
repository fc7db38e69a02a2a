/**
 * The parts of a VirtualService HTTP route istiod validates one by one (validateHTTPFaultInjection,
 * validateHTTPMirrors, validateHTTPRedirect, validateHTTPDirectResponse, validateHTTPRetry,
 * validateHTTPRewrite, validateCORSPolicy), with the CRD's bounds: first problem only, with its path.
 */

import { utf8Length } from "../../utf8.ts";
import { type Check, child, isObject, oneOf, quote, typeName } from "../check.ts";
import { grpcStatusCodes, retryOnPolicies, retryOnStatusCode } from "./codes.ts";
import { duration, durationNanos } from "./duration.ts";
import {
  atMostOneOf,
  destination,
  double,
  eachOf,
  fields,
  has,
  int32,
  objectProblem,
  type P,
  percentage,
  portNumber,
  regex,
  str,
  stringMatch,
  uint32,
} from "./validate-fields.ts";
import { corsHeaderName } from "./validate-headers.ts";

/** validateHTTPStatus: 200-600. */
export function httpStatus(v: unknown, path: string): P {
  return (
    int32(v, path) ??
    ((v as number) < 200 || (v as number) > 600
      ? { field: path, message: `HTTP status ${v} is not in range 200-599` }
      : undefined)
  );
}

/** validateHTTPFaultInjection: an abort and/or a delay, each valid. */
export function fault(f: unknown, path: string): P {
  if (!isObject(f)) return objectProblem(f, path);
  if (!has(f, "abort") && !has(f, "delay"))
    return { field: path, message: "HTTP fault injection must have an abort and/or a delay" };
  if (has(f, "abort")) {
    const a = f.abort;
    const at = child(path, "abort");
    if (!isObject(a)) return objectProblem(a, at);
    const p =
      atMostOneOf(a, at, ["httpStatus", "grpcStatus", "http2Error"]) ??
      (has(a, "percentage") ? percentage(a.percentage, child(at, "percentage")) : undefined) ??
      (has(a, "httpStatus") ? httpStatus(a.httpStatus, child(at, "httpStatus")) : undefined);
    if (p) return p;
    if (has(a, "http2Error"))
      return { field: child(at, "http2Error"), message: "HTTP/2 abort fault injection not supported yet" };
    if (
      has(a, "grpcStatus") &&
      !(typeof a.grpcStatus === "string" && Object.hasOwn(grpcStatusCodes, a.grpcStatus))
    )
      return {
        field: child(at, "grpcStatus"),
        message: `gRPC status ${quote(a.grpcStatus)} is not supported. See https://github.com/grpc/grpc/blob/master/doc/statuscodes.md for a list of supported codes, for example 'NOT_FOUND'`,
      };
  }
  if (has(f, "delay")) {
    const d = f.delay;
    const at = child(path, "delay");
    if (!isObject(d)) return objectProblem(d, at);
    const p =
      atMostOneOf(d, at, ["fixedDelay", "exponentialDelay"]) ??
      fields(d, at, { percentage, percent: int32, fixedDelay: duration, exponentialDelay: duration });
    if (p) return p;
    if (has(d, "exponentialDelay"))
      return { field: child(at, "exponentialDelay"), message: "exponentialDelay not supported yet" };
  }
  return undefined;
}

/** A mirror percentage (validateHTTPMirrors, mirrorPercentage): 0-100, any fraction. */
export const mirrorPercentage: Check = (v, path) => {
  if (!isObject(v)) return objectProblem(v, path);
  const value = v.value ?? 0;
  const at = child(path, "value");
  const p = double(value, at);
  if (p) return p;
  if ((value as number) > 100)
    return { field: at, message: `mirror percentage must have a max value of 100 (it has ${value})` };
  if ((value as number) < 0)
    return { field: at, message: `mirror percentage must have a min value of 0 (it has ${value})` };
  return undefined;
};

/** validateHTTPMirrors: each entry a valid destination and percentage. */
export function mirrors(v: unknown, path: string): P {
  return eachOf(v, path, (m, at) => {
    if (!isObject(m)) return objectProblem(m, at);
    if (!has(m, "destination"))
      return { field: child(at, "destination"), message: "destination is required for mirrors" };
    return (
      destination(m.destination, child(at, "destination")) ??
      (has(m, "percentage") ? mirrorPercentage(m.percentage, child(at, "percentage")) : undefined)
    );
  });
}

/** validateHTTPRedirect: a target (URI, authority, scheme or port), a 3xx code, http(s), a valid port. */
export function redirect(r: unknown, path: string): P {
  if (!isObject(r)) return objectProblem(r, path);
  const p =
    atMostOneOf(r, path, ["port", "derivePort"]) ??
    fields(r, path, { port: uint32, redirectCode: uint32 }) ??
    (has(r, "derivePort")
      ? oneOf(["FROM_PROTOCOL_DEFAULT", "FROM_REQUEST_PORT"])(r.derivePort, child(path, "derivePort"))
      : undefined);
  if (p) return p;
  if (
    str(r, "uri") === "" &&
    str(r, "authority") === "" &&
    !has(r, "port") &&
    !has(r, "derivePort") &&
    str(r, "scheme") === ""
  )
    return { field: path, message: "redirect must specify URI, authority, scheme, or port" };
  const code = (r.redirectCode as number | undefined) ?? 0;
  if (code !== 0 && (code < 300 || code > 399))
    return {
      field: child(path, "redirectCode"),
      message: `${code} is not a valid redirect code, must be 3xx`,
    };
  const scheme = str(r, "scheme");
  if (scheme !== "" && scheme !== "http" && scheme !== "https")
    return { field: child(path, "scheme"), message: `invalid redirect scheme, must be "http" or "https"` };
  if (((r.port as number | undefined) ?? 0) > 0) return portNumber(r.port, child(path, "port"));
  return undefined;
}

/** The size of a direct response body in bytes: a string's UTF-8, a bytes field's decoded base64. */
export function bodySize(body: Record<string, unknown>): number {
  if (typeof body.string === "string") return utf8Length(body.string);
  if (typeof body.bytes !== "string") return 0;
  const b = body.bytes.replace(/=+$/, "");
  return Math.floor((b.length * 3) / 4);
}

/** validateHTTPDirectResponse: a status (required by the CRD) 200-600, a body under 1 MiB. */
export function directResponse(d: unknown, path: string): P {
  if (!isObject(d)) return objectProblem(d, path);
  if (!has(d, "status")) return { field: child(path, "status"), message: "is required" };
  if (has(d, "body")) {
    const b = d.body;
    const at = child(path, "body");
    if (!isObject(b)) return objectProblem(b, at);
    const p = atMostOneOf(b, at, ["string", "bytes"]);
    if (p) return p;
    if (
      has(b, "bytes") &&
      (typeof b.bytes !== "string" || !/^[A-Za-z0-9+/]*={0,2}$/.test(b.bytes) || b.bytes.length % 4 === 1)
    )
      return { field: child(at, "bytes"), message: "must be base64 bytes" };
    if (bodySize(b) > 1024 * 1024)
      return {
        field: at,
        message: "large direct_responses may impact control plane performance, must be less than 1MB",
      };
  }
  return uint32(d.status, child(path, "status")) ?? httpStatus(d.status, child(path, "status"));
}

/** validateHTTPRetry: attempts, perTryTimeout, retryOn policies, backoff; no settings with 0 attempts. */
export function retries(r: unknown, path: string): P {
  if (!isObject(r)) return objectProblem(r, path);
  const attempts = r.attempts ?? 0;
  const p = int32(attempts, child(path, "attempts"));
  if (p) return p;
  if ((attempts as number) < 0)
    return { field: child(path, "attempts"), message: "attempts cannot be negative" };
  if (
    attempts === 0 &&
    (has(r, "perTryTimeout") || str(r, "retryOn") !== "" || has(r, "retryRemoteLocalities"))
  )
    return {
      field: child(path, "attempts"),
      message: "http retry policy configured when attempts are set to 0 (disabled)",
    };
  const q = fields(r, path, { perTryTimeout: duration, backoff: duration });
  if (q) return q;
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

/** validateHTTPRewrite: URI or uriRegexRewrite (not both), or an authority; the regex rewrite complete and valid. */
export function rewrite(r: unknown, path: string): P {
  if (!isObject(r)) return objectProblem(r, path);
  const uri = str(r, "uri");
  if (uri !== "" && has(r, "uriRegexRewrite"))
    return { field: path, message: "rewrite may only contain one of URI or UriRegexRewrite" };
  if (uri === "" && !has(r, "uriRegexRewrite") && str(r, "authority") === "")
    return {
      field: path,
      message:
        "rewrite must specify at least one of URI, UriRegexRewrite, or authority. Only one of URI or UriRegexRewrite may be specified",
    };
  if (!has(r, "uriRegexRewrite")) return undefined;
  const x = r.uriRegexRewrite;
  const at = child(path, "uriRegexRewrite");
  if (!isObject(x)) return objectProblem(x, at);
  if (str(x, "match") === "" || str(x, "rewrite") === "")
    return { field: at, message: "UriRegexRewrite requires both Rewrite and Match fields to be specified" };
  return regex(x.match, child(at, "match"), "HTTPRewrite.UriRegexRewrite.Match");
}

const corsMethods = new Set([
  "GET",
  "HEAD",
  "POST",
  "PUT",
  "PATCH",
  "DELETE",
  "CONNECT",
  "OPTIONS",
  "TRACE",
  "*",
]);

/** validateCORSPolicy: origins, methods, header names and a max age in whole seconds. */
export function corsPolicy(c: unknown, path: string): P {
  if (!isObject(c)) return objectProblem(c, path);
  const p =
    (has(c, "allowOrigins")
      ? eachOf(c.allowOrigins, child(path, "allowOrigins"), (o, at) => {
          if (!isObject(o)) return objectProblem(o, at);
          const kind = ["exact", "prefix", "regex"].find((k) => has(o, k));
          if (kind === undefined || o[kind] === "")
            return { field: at, message: "'' is not a valid match type for CORS allow origins" };
          return stringMatch(o, at, "corsPolicy.allowOrigins");
        })
      : undefined) ??
    (has(c, "allowMethods")
      ? eachOf(c.allowMethods, child(path, "allowMethods"), (m, at) =>
          typeof m === "string" && corsMethods.has(m)
            ? undefined
            : { field: at, message: `${quote(m)} is not a supported HTTP method` },
        )
      : undefined) ??
    (has(c, "allowHeaders")
      ? eachOf(c.allowHeaders, child(path, "allowHeaders"), corsHeaderName)
      : undefined) ??
    (has(c, "exposeHeaders")
      ? eachOf(c.exposeHeaders, child(path, "exposeHeaders"), corsHeaderName)
      : undefined) ??
    fields(c, path, { maxAge: duration, allowCredentials: crdBool });
  if (p) return p;
  const preflights = has(c, "unmatchedPreflights")
    ? oneOf(["UNSPECIFIED", "FORWARD", "IGNORE"])(c.unmatchedPreflights, child(path, "unmatchedPreflights"))
    : undefined;
  if (preflights) return preflights;
  if (typeof c.maxAge === "string" && (durationNanos(c.maxAge) ?? 0n) % 1_000_000_000n !== 0n)
    return {
      field: child(path, "maxAge"),
      message: "max_age duration is accurate only to seconds precision",
    };
  return undefined;
}

const crdBool: Check = (v, path) =>
  typeof v === "boolean" ? undefined : { field: path, message: `must be a boolean, got ${typeName(v)}` };
