/**
 * HTTPRoute and GRPCRoute rules ▶ Istio HTTPRoutes, as istiod's convertHTTPRoute and
 * convertGRPCRoute build them (conversion.go): one match per rule entry, filters to headers,
 * redirect, rewrite and mirrors, backendRefs to weighted destinations. A backend the route may not
 * name (another namespace without a ReferenceGrant) keeps an empty destination, as istiod keeps it,
 * so no forbidden host is ever routed to; the error becomes the parent's ResolvedRefs condition.
 */

import { goDurationToProto } from "./durations.ts";
import type { ReferenceGrants } from "./reference-grants.ts";
import {
  type ConfigError,
  grpcUriMatch,
  type IstioHttpRoute,
  uriMatch,
  valueMatches,
} from "./route-matches.ts";
import type { BackendRef, GrpcMatch, HeaderFilter, HttpMatch, RouteFilter, RouteRule } from "./types.ts";
import { gatewayGroup } from "./types.ts";

/** What converting a rule needs beyond the rule. */
export interface RuleContext {
  /** `<namespace>/<name>` of every Service known. */
  services: ReadonlySet<string>;
  grants: ReferenceGrants;
  domainSuffix: string;
}

/** The route being converted. */
export interface RouteIdentity {
  kind: "HTTPRoute" | "GRPCRoute";
  namespace: string;
  name: string;
}

/** A converted rule: the route (absent on a hard error) and the error to report. */
export interface RuleResult {
  route?: IstioHttpRoute;
  error?: ConfigError;
}

function joinErrors(a: ConfigError | undefined, b: ConfigError | undefined): ConfigError | undefined {
  if (!b) return a;
  if (!a) return b;
  return { reason: a.reason, message: `${a.message}; ${b.message}` };
}

const isInvalidBackend = (e: ConfigError) =>
  e.reason === "RefNotPermitted" || e.reason === "BackendNotFound" || e.reason === "InvalidKind";

/** buildDestination: a Service backend (the only kind supported) ▶ an Istio destination, or why not. */
function buildDestination(
  ctx: RuleContext,
  route: RouteIdentity,
  to: BackendRef,
  enforceGrants: boolean,
): { destination?: Record<string, unknown>; error?: ConfigError } {
  const group = to.group ?? "";
  const kind = to.kind ?? "Service";
  const ns = route.namespace;
  if (enforceGrants && to.namespace !== undefined && to.namespace !== ns) {
    const ok = ctx.grants.allowed({
      fromGroup: gatewayGroup,
      fromKind: route.kind,
      fromNamespace: ns,
      toGroup: group,
      toKind: kind,
      toNamespace: to.namespace,
      toName: to.name,
    });
    if (!ok)
      return {
        destination: {},
        error: {
          reason: "RefNotPermitted",
          message: `backendRef ${to.name}/${to.namespace} not accessible to a ${route.kind} in namespace "${ns}" (missing a ReferenceGrant?)`,
        },
      };
  }
  if (group !== "" || kind !== "Service")
    return {
      destination: {},
      error: {
        reason: "InvalidKind",
        message: `referencing unsupported backendRef: group "${to.group ?? ""}" kind "${to.kind ?? ""}"`,
      },
    };
  if (to.name.includes("."))
    return {
      error: {
        reason: "InvalidDestination",
        message: "service name invalid; the name of the Service must be used, not the hostname.",
      },
    };
  const namespace = to.namespace ?? ns;
  const host = `${to.name}.${namespace}.svc.${ctx.domainSuffix}`;
  const missing = ctx.services.has(`${namespace}/${to.name}`)
    ? undefined
    : { reason: "BackendNotFound", message: `backend(${host}) not found` };
  if (to.port === undefined)
    return { error: { reason: "InvalidDestination", message: "port is required in backendRef" } };
  return { destination: { host, port: { number: to.port } }, ...(missing && { error: missing }) };
}

function isValidHeaderValue(v: string): boolean {
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (!(c === 0x09 || (c >= 0x20 && c !== 0x7f))) return false;
  }
  return true;
}

function headerListToMap(
  list: { name: string; value: string }[] | undefined,
): Record<string, string> | undefined {
  if (!list || list.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const h of list) {
    const k = h.name.toLowerCase();
    // "Subsequent entries with an equivalent header name MUST be ignored."
    if (!Object.hasOwn(out, k)) out[k] = h.value;
  }
  return out;
}

/** createHeadersFilter. */
function headerOperations(f: HeaderFilter | undefined): {
  ops?: Record<string, unknown>;
  error?: ConfigError;
} {
  if (!f) return {};
  for (const h of [...(f.set ?? []), ...(f.add ?? [])])
    if (!isValidHeaderValue(h.value))
      return {
        error: { reason: "InvalidFilter", message: `header "${h.name}" value contains invalid characters` },
      };
  const add = headerListToMap(f.add);
  const set = headerListToMap(f.set);
  return {
    ops: {
      ...(add && { add }),
      ...(f.remove && f.remove.length > 0 && { remove: [...f.remove] }),
      ...(set && { set }),
    },
  };
}

function redirect(f: NonNullable<RouteFilter["requestRedirect"]>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (f.path?.type === "ReplaceFullPath") out.uri = f.path.replaceFullPath;
  else if (f.path?.type === "ReplacePrefixMatch") out.uri = `%PREFIX()%${f.path.replacePrefixMatch}`;
  if (f.hostname !== undefined) out.authority = f.hostname;
  if (f.port !== undefined) out.port = f.port;
  // "When empty, port (if specified) of the request is used": unlike Istio's default.
  else out.derivePort = f.scheme !== undefined ? "FROM_PROTOCOL_DEFAULT" : "FROM_REQUEST_PORT";
  if (f.scheme !== undefined) out.scheme = f.scheme;
  if (f.statusCode !== undefined) out.redirectCode = f.statusCode;
  return out;
}

function rewrite(f: NonNullable<RouteFilter["urlRewrite"]>): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  if (f.path?.type === "ReplacePrefixMatch") {
    const p = (f.path.replacePrefixMatch ?? "").replace(/\/$/, "");
    // `/` means removing the prefix.
    out.uri = p === "" ? "/" : p;
  } else if (f.path?.type === "ReplaceFullPath") {
    out.uriRegexRewrite = { match: "/.*", rewrite: f.path.replaceFullPath };
  }
  if (f.hostname !== undefined && f.hostname !== "") out.authority = f.hostname;
  return Object.keys(out).length === 0 ? undefined : out;
}

function mirror(
  ctx: RuleContext,
  route: RouteIdentity,
  f: NonNullable<RouteFilter["requestMirror"]>,
  enforce: boolean,
): { mirror?: Record<string, unknown>; error?: ConfigError } {
  const d = buildDestination(ctx, route, { ...f.backendRef, weight: 1 }, enforce);
  if (d.error) return { error: d.error };
  let percentage: { value: number } | undefined;
  if (f.fraction) percentage = { value: (100 * f.fraction.numerator) / (f.fraction.denominator ?? 100) };
  else if (f.percent !== undefined) percentage = { value: f.percent };
  return { mirror: { destination: d.destination, ...(percentage && { percentage }) } };
}

/**
 * One rule (with at most one match, as istiod splits them) ▶ an Istio HTTPRoute; `pos` is the
 * rule's index (its default name `<ns>.<name>.<pos>`); `enforceGrants` is false for mesh parents.
 */
export function convertRule(
  ctx: RuleContext,
  route: RouteIdentity,
  rule: RouteRule<HttpMatch | GrpcMatch>,
  pos: number,
  enforceGrants: boolean,
): RuleResult {
  const grpc = route.kind === "GRPCRoute";
  const out: IstioHttpRoute = {};
  out.name = rule.name ?? `${route.namespace}.${route.name}.${pos}`;
  const matches: Record<string, unknown>[] = [];
  for (const m of rule.matches ?? []) {
    if (grpc) {
      const g = m as GrpcMatch;
      const uri = grpcUriMatch(g.method);
      if (uri.error) return { error: uri.error };
      const headers = valueMatches(g.headers);
      matches.push({ ...(uri.uri && { uri: uri.uri }), ...(headers && { headers }) });
    } else {
      const h = m as HttpMatch;
      const headers = valueMatches(h.headers);
      const queryParams = valueMatches(h.queryParams);
      matches.push({
        uri: uriMatch(h.path),
        ...(headers && { headers }),
        ...(queryParams && { queryParams }),
        ...(h.method !== undefined && { method: { exact: h.method } }),
      });
    }
  }
  if (matches.length > 0) out.match = matches;
  let mirrorError: ConfigError | undefined;
  const headers: Record<string, unknown> = {};
  for (const f of rule.filters ?? []) {
    if (f.type === "RequestHeaderModifier" || f.type === "ResponseHeaderModifier") {
      const which = f.type === "RequestHeaderModifier" ? "request" : "response";
      const h = headerOperations(which === "request" ? f.requestHeaderModifier : f.responseHeaderModifier);
      if (h.error) return { error: h.error };
      if (h.ops) headers[which] = h.ops;
    } else if (f.type === "RequestMirror" && f.requestMirror) {
      const m = mirror(ctx, route, f.requestMirror, enforceGrants);
      if (m.error && grpc) return { error: m.error };
      if (m.error) mirrorError = m.error;
      else out.mirrors = [...((out.mirrors as unknown[]) ?? []), m.mirror];
    } else if (!grpc && f.type === "RequestRedirect" && f.requestRedirect) {
      out.redirect = redirect(f.requestRedirect);
    } else if (!grpc && f.type === "URLRewrite" && f.urlRewrite) {
      const r = rewrite(f.urlRewrite);
      if (r) out.rewrite = r;
      else delete out.rewrite;
    } else {
      return { error: { reason: "InvalidFilter", message: `unsupported filter type "${f.type}"` } };
    }
  }
  if (Object.keys(headers).length > 0) out.headers = headers;
  let retries: Record<string, unknown> | undefined;
  if (!grpc && rule.retry) {
    // "Implementations SHOULD retry on connection errors ... if a retry stanza is configured."
    const retryOn = ["connect-failure", "refused-stream", "unavailable", "cancelled"];
    for (const c of rule.retry.codes ?? []) retryOn.push(String(c));
    const attempts = rule.retry.attempts ?? 2;
    const backoff = goDurationToProto(rule.retry.backoff);
    retries = {
      ...(attempts !== 0 && { attempts, retryOn: retryOn.join(",") }),
      ...(backoff && { backoff }),
    };
    out.retries = retries;
  }
  if (!grpc && rule.timeouts) {
    const request = goDurationToProto(rule.timeouts.request);
    if (request) out.timeout = request;
    const backend = goDurationToProto(rule.timeouts.backendRequest);
    if (backend && retries) retries.perTryTimeout = backend;
    else if (backend) out.timeout = backend;
  }
  const refs = rule.backendRefs ?? [];
  const weightSum = refs.reduce((s, b) => s + (b.weight ?? 1), 0);
  if (weightSum === 0 && out.redirect === undefined) {
    // No backend: 404 (HTTPRoute); backends all of weight 0, or any GRPCRoute: 500, as the spec says.
    out.directResponse = { status: !grpc && refs.length === 0 ? 404 : 500 };
    return { route: sortKeys(out), ...(mirrorError && { error: mirrorError }) };
  }
  if (out.redirect !== undefined && refs.length === 0) return { route: sortKeys(out) };
  const kept = refs.filter((b) => (b.weight ?? 1) !== 0);
  const weights = kept.length === 1 ? [0] : kept.map((b) => b.weight ?? 1);
  let backendError: ConfigError | undefined;
  const destinations: Record<string, unknown>[] = [];
  for (const [i, b] of kept.entries()) {
    const d = buildDestination(ctx, route, b, enforceGrants);
    if (d.error && !isInvalidBackend(d.error)) return { error: d.error };
    if (d.error) backendError = d.error;
    const rd: Record<string, unknown> = { destination: d.destination ?? {} };
    const dh: Record<string, unknown> = {};
    for (const f of b.filters ?? []) {
      if (f.type !== "RequestHeaderModifier" && f.type !== "ResponseHeaderModifier")
        return { error: { reason: "InvalidFilter", message: `unsupported filter type "${f.type}"` } };
      const which = f.type === "RequestHeaderModifier" ? "request" : "response";
      const h = headerOperations(which === "request" ? f.requestHeaderModifier : f.responseHeaderModifier);
      if (h.error) return { error: h.error };
      if (h.ops) dh[which] = h.ops;
    }
    if (Object.keys(dh).length > 0) rd.headers = dh;
    if (weights[i] !== 0) rd.weight = weights[i];
    destinations.push(rd);
  }
  out.route = destinations;
  const error = joinErrors(backendError, mirrorError);
  return { route: sortKeys(out), ...(error && { error }) };
}

/** Keys in a fixed order, so equal routes serialize equally. */
function sortKeys(r: IstioHttpRoute): IstioHttpRoute {
  return Object.fromEntries(
    Object.keys(r)
      .sort()
      .map((k) => [k, r[k]]),
  ) as IstioHttpRoute;
}
