/**
 * VirtualServices normalized for proxyless gRPC generation, as istiod translates them
 * (resolveVirtualServiceShortnames, route.go translateRoute/applyHTTPRouteDestination, retry
 * ConvertPolicy, TranslateFault): hosts and destinations resolved, HTTP routes in order, matches on
 * the gRPC method path (`/pkg.Service/Method`) and headers, weights as Envoy reads them (relative),
 * timeout, retries split into the gRPC status conditions gRPC honours and the rest, fault delay/abort;
 * and the fields only Envoy sidecars read (redirects, direct responses, header operations, mirrors).
 * How a listener port takes the routes, and the cluster a destination names: vs-routes.ts.
 */
import { type GrpcRetryOn, grpcRetryOn, grpcStatusCodes, retryOnStatusCode } from "./codes.ts";
import type { ConfigMeta } from "./config-meta.ts";
import { durationMs } from "./duration.ts";
import { resolveHost } from "./visibility.ts";

/** The StringMatch kinds (an Istio StringMatch is one of them). */
export type StringMatchKind = "exact" | "prefix" | "regex";

/** A match on the request path, which for gRPC is the method path `/package.Service/Method`. */
export interface PathMatch {
  kind: StringMatchKind;
  value: string;
  /** ignoreUriCase. */
  ignoreCase: boolean;
}

/** A header (gRPC metadata) match; `present` is a StringMatch with no kind (`{}`). Names lower-cased. */
export interface HeaderMatch {
  name: string;
  kind: StringMatchKind | "present";
  value: string;
}

/** One HTTPMatchRequest: all its conditions must hold. */
export interface RouteMatch {
  name?: string;
  /** Absent: any path (Envoy's prefix `/`). */
  path?: PathMatch;
  /** Sorted by name, as istiod sorts them. */
  headers: HeaderMatch[];
  /** Only on this destination port (HTTPMatchRequest.port). */
  port?: number;
  /** Conditions present that a shared route cannot express (see unsupportedFields); the generator decides. */
  ignored: string[];
}

/** One weighted destination of a route. */
export interface RouteDestination {
  /** Resolved like the VirtualService's hosts. */
  host: string;
  subset?: string;
  port?: number;
  /** Relative weight (a destination gets weight / sum); a lone destination gets 100, zero weights are dropped. */
  weight: number;
}

/** A route's retry policy as Envoy's RetryPolicy takes it (retry.ConvertPolicy). */
export interface RetryPolicy {
  /** num_retries. */
  attempts: number;
  perTryTimeoutMs?: number;
  /** The retryOn conditions that are gRPC status codes (the only ones gRPC's xDS client honours). */
  grpcRetryOn: GrpcRetryOn[];
  /** Every other retryOn policy (Envoy conditions, `retriable-status-codes` added when codes are given). */
  otherRetryOn: string[];
  /** HTTP status codes named in retryOn (retriable_status_codes). */
  retriableStatusCodes: number[];
}

/** Fault injection as Envoy's HTTPFault takes it (per-million percentages, ms, status codes). */
export interface FaultPolicy {
  delay?: { perMillion: number; fixedDelayMs: number };
  abort?: { perMillion: number; grpcStatus?: number; httpStatus?: number };
}

/** What a route does: forward to weighted destinations, or a non-forwarding action. */
export type RouteAction =
  | { kind: "route"; destinations: RouteDestination[] }
  | ({ kind: "redirect" } & Redirect)
  | { kind: "directResponse"; status: number; body?: DirectResponseBody }
  /** A root VirtualService's delegate route: unsupported, never routed (as istiod when the delegate is missing). */
  | { kind: "delegate" };

/** HTTPRedirect as written (an Envoy sidecar's RedirectAction; proxyless gRPC aborts with the code). */
export interface Redirect {
  uri?: string;
  authority?: string;
  scheme?: string;
  /** port, when set and not 0. */
  port?: number;
  derivePort?: "FROM_PROTOCOL_DEFAULT" | "FROM_REQUEST_PORT";
  /** redirectCode, when set and not 0 (301 then). */
  redirectCode?: number;
}

/** HTTPDirectResponse.body: a string, or bytes (base64, as the JSON form of the API carries them). */
export type DirectResponseBody = { string: string } | { bytes: string };

/** One HTTP route of a VirtualService, in order. */
export interface HttpRoute {
  name?: string;
  /** Empty: matches every request. */
  matches: RouteMatch[];
  action: RouteAction;
  timeoutMs?: number;
  /** Absent: retries disabled (attempts 0). Istio's default policy when the route sets none. */
  retries?: RetryPolicy;
  fault?: FaultPolicy;
  /** rewrite: the path prefix and authority an Envoy sidecar rewrites (gRPC ignores it). */
  rewrite?: { uri?: string; authority?: string };
  /** mirror (or mirrors), each with its percentage per million (default all): Envoy sidecars only. */
  mirrors?: MirrorPolicy[];
  /** headers: request and response header operations: Envoy sidecars only. */
  headers?: { request?: HeaderOperations; response?: HeaderOperations };
}

/** A mirror destination (resolved like a route destination) and how much traffic it copies. */
export interface MirrorPolicy {
  destination: Omit<RouteDestination, "weight">;
  /** Per million; undefined = every request (istiod's default 100%). */
  perMillion?: number;
}

/** Headers.HeaderOperations: set (overwrite), add (append), remove; names as written. */
export interface HeaderOperations {
  set: Record<string, string>;
  add: Record<string, string>;
  remove: string[];
}

/** A validated VirtualService, hosts and destinations resolved. */
export interface VirtualServiceModel extends ConfigMeta {
  /** Resolved; wildcards kept for matching. Empty for a delegate VirtualService. */
  hosts: string[];
  /** spec.gateways as written; empty means the mesh. */
  gateways: string[];
  /** Bound to sidecars (and proxyless clients): no gateways, or `mesh` among them. */
  appliesToMesh: boolean;
  exportTo: string[];
  http: HttpRoute[];
}

/** Istio's DefaultPolicy when a route sets no retries: 2 attempts on connect failures, refused streams, UNAVAILABLE, CANCELLED, 503. */
export const defaultRetryPolicy: Readonly<RetryPolicy> = {
  attempts: 2,
  grpcRetryOn: ["unavailable", "cancelled"],
  otherRetryOn: ["connect-failure", "refused-stream", "retriable-status-codes"],
  retriableStatusCodes: [503],
};

type Raw = Record<string, unknown>;
const list = (v: unknown): Raw[] => (Array.isArray(v) ? (v as Raw[]) : []);
const obj = (v: unknown): Raw | undefined =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Raw) : undefined;

/**
 * Normalizes a VirtualService spec that passed virtualServiceCheck. Its HTTP matches are read for
 * the mesh, or with `gateway` (`<ns>/<name>`) for that gateway: a match naming gateways applies
 * only to those it names (sourceMatchHTTP; a short name is in the VirtualService's namespace).
 */
export function toVirtualService(
  meta: ConfigMeta,
  spec: unknown,
  domainSuffix: string,
  gateway = "mesh",
): VirtualServiceModel {
  const s = obj(spec) ?? {};
  const resolve = (h: string) => resolveHost(h, meta.namespace, domainSuffix);
  const forGateway = (names: readonly string[]) =>
    names.some((g) => (g === "mesh" || g.includes("/") ? g : `${meta.namespace}/${g}`) === gateway);
  const gateways = [...((s.gateways as string[] | undefined) ?? [])];
  return {
    name: meta.name,
    namespace: meta.namespace,
    ...(meta.creationTimestamp !== undefined && { creationTimestamp: meta.creationTimestamp }),
    hosts: ((s.hosts as string[] | undefined) ?? []).map(resolve),
    gateways,
    appliesToMesh: gateways.length === 0 || gateways.includes("mesh"),
    exportTo: [...((s.exportTo as string[] | undefined) ?? [])],
    http: list(s.http).map((r) => toHttpRoute(r, resolve, forGateway)),
  };
}

function toHttpRoute(
  r: Raw,
  resolve: (h: string) => string,
  forGateway: (names: readonly string[]) => boolean,
): HttpRoute {
  const out: HttpRoute = {
    matches: list(r.match).flatMap((m) => toMatch(m, forGateway)),
    action: toAction(r, resolve),
  };
  if (typeof r.name === "string" && r.name !== "") out.name = r.name;
  if (list(r.match).length > 0 && out.matches.length === 0) out.matches = [neverMatch];
  if (typeof r.timeout === "string") out.timeoutMs = durationMs(r.timeout);
  const retries = toRetries(obj(r.retries));
  if (retries) out.retries = retries;
  const fault = toFault(obj(r.fault));
  if (fault) out.fault = fault;
  const rw = obj(r.rewrite);
  if (rw && (typeof rw.uri === "string" || typeof rw.authority === "string"))
    out.rewrite = {
      ...(typeof rw.uri === "string" && { uri: rw.uri }),
      ...(typeof rw.authority === "string" && rw.authority !== "" && { authority: rw.authority }),
    };
  const mirrors = toMirrors(r, resolve);
  if (mirrors.length > 0) out.mirrors = mirrors;
  const h = obj(r.headers);
  if (h) {
    const request = toHeaderOps(obj(h.request));
    const response = toHeaderOps(obj(h.response));
    if (request || response) out.headers = { ...(request && { request }), ...(response && { response }) };
  }
  return out;
}

/** mirror + mirrorPercentage, or mirrors (each with its own percentage). */
function toMirrors(r: Raw, resolve: (h: string) => string): MirrorPolicy[] {
  const one = (dest: Raw | undefined, pct: unknown): MirrorPolicy | undefined => {
    if (!dest || typeof dest.host !== "string") return undefined;
    const destination: MirrorPolicy["destination"] = { host: resolve(dest.host) };
    if (typeof dest.subset === "string" && dest.subset !== "") destination.subset = dest.subset;
    const port = obj(dest.port)?.number;
    if (typeof port === "number" && port !== 0) destination.port = port;
    return pct != null ? { destination, perMillion: perMillion(pct) } : { destination };
  };
  const single = one(obj(r.mirror), r.mirrorPercentage);
  if (single) return [single];
  return list(r.mirrors).flatMap((m) => one(obj(m.destination), m.percentage) ?? []);
}

function toHeaderOps(o: Raw | undefined): HeaderOperations | undefined {
  if (!o) return undefined;
  const strings = (v: unknown) =>
    Object.fromEntries(
      Object.entries(obj(v) ?? {}).filter((e): e is [string, string] => typeof e[1] === "string"),
    );
  const ops: HeaderOperations = {
    set: strings(o.set),
    add: strings(o.add),
    remove: (Array.isArray(o.remove) ? o.remove : []).filter((x): x is string => typeof x === "string"),
  };
  return Object.keys(ops.set).length + Object.keys(ops.add).length + ops.remove.length > 0 ? ops : undefined;
}

/** Stands for matches that all belong to other gateways: the route never applies here. */
const neverMatch: RouteMatch = { headers: [], ignored: ["gateways"], port: 0 };

function toRedirect(rd: Raw): Redirect {
  const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
  const n = (v: unknown) => (typeof v === "number" && v !== 0 ? v : undefined);
  const dp = rd.derivePort;
  const out: Redirect = {
    uri: str(rd.uri),
    authority: str(rd.authority),
    scheme: str(rd.scheme),
    port: n(rd.port),
    derivePort: dp === "FROM_PROTOCOL_DEFAULT" || dp === "FROM_REQUEST_PORT" ? dp : undefined,
    redirectCode: n(rd.redirectCode),
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined)) as Redirect;
}

function toAction(r: Raw, resolve: (h: string) => string): RouteAction {
  if (r.delegate != null) return { kind: "delegate" };
  const dr = obj(r.directResponse);
  if (dr) {
    const b = obj(dr.body);
    const body: DirectResponseBody | undefined =
      typeof b?.string === "string"
        ? { string: b.string }
        : typeof b?.bytes === "string"
          ? { bytes: b.bytes }
          : undefined;
    return { kind: "directResponse", status: dr.status as number, ...(body && { body }) };
  }
  const rd = obj(r.redirect);
  if (rd) return { kind: "redirect", ...toRedirect(rd) };
  // A destination without a host is a Gateway API backend the translation refused (istiod keeps it
  // empty): it is dropped with its weight; a route left with none answers 500, as the Gateway API asks.
  const raw = list(r.route).filter((d) => typeof obj(d.destination)?.host === "string");
  if (raw.length === 0) return { kind: "directResponse", status: 500 };
  const dests = raw.map((d): RouteDestination => {
    const dest = obj(d.destination) ?? {};
    const out: RouteDestination = {
      host: resolve(dest.host as string),
      weight: (d.weight as number | undefined) ?? 0,
    };
    if (typeof dest.subset === "string" && dest.subset !== "") out.subset = dest.subset;
    const port = obj(dest.port)?.number;
    if (typeof port === "number" && port !== 0) out.port = port;
    return out;
  });
  if (dests.length === 1)
    return { kind: "route", destinations: [{ ...(dests[0] as RouteDestination), weight: 100 }] };
  return { kind: "route", destinations: dests.filter((d) => d.weight > 0) };
}

const ignorable = [
  "method",
  "scheme",
  "authority",
  "queryParams",
  "withoutHeaders",
  "sourceLabels",
  "sourceNamespace",
  "statPrefix",
];

function toMatch(m: Raw, forGateway: (names: readonly string[]) => boolean): RouteMatch[] {
  const gateways = m.gateways as string[] | undefined;
  // sourceMatchHTTP: a match naming gateways applies only to those it names (`mesh`: the mesh).
  if (gateways && gateways.length > 0 && !forGateway(gateways)) return [];
  const out: RouteMatch = { headers: [], ignored: ignorable.filter((k) => m[k] != null && m[k] !== "") };
  if (typeof m.name === "string" && m.name !== "") out.name = m.name;
  const uri = obj(m.uri);
  if (uri) {
    const kind = stringMatchKind(uri);
    out.path =
      kind === "present"
        ? { kind: "prefix", value: "/", ignoreCase: m.ignoreUriCase === true }
        : { kind, value: uri[kind] as string, ignoreCase: m.ignoreUriCase === true };
  }
  for (const [name, sm] of Object.entries(obj(m.headers) ?? {})) {
    const kind = stringMatchKind(obj(sm) ?? {});
    out.headers.push({
      name: name.toLowerCase(),
      kind,
      value: kind === "present" ? "" : ((sm as Raw)[kind] as string),
    });
  }
  out.headers.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (typeof m.port === "number" && m.port !== 0) out.port = m.port;
  return [out];
}

function stringMatchKind(sm: Raw): StringMatchKind | "present" {
  for (const k of ["exact", "prefix", "regex"] as const) if (typeof sm[k] === "string") return k;
  return "present";
}

/** retry.ConvertPolicy: no retries block ▶ the default policy; attempts 0 ▶ none. */
function toRetries(r: Raw | undefined): RetryPolicy | undefined {
  const d = defaultRetryPolicy;
  const base = (): RetryPolicy => ({
    attempts: d.attempts,
    grpcRetryOn: [...d.grpcRetryOn],
    otherRetryOn: [...d.otherRetryOn],
    retriableStatusCodes: [...d.retriableStatusCodes],
  });
  if (!r) return base();
  const attempts = (r.attempts as number | undefined) ?? 0;
  if (attempts <= 0) return undefined;
  const out: RetryPolicy = { ...base(), attempts };
  if (typeof r.retryOn === "string" && r.retryOn !== "") {
    const codes: number[] = [];
    const grpc: GrpcRetryOn[] = [];
    const other: string[] = [];
    for (const part of r.retryOn.split(",").map((p) => p.trim())) {
      if (part === "") continue;
      const code = retryOnStatusCode(part);
      if (code !== undefined) codes.push(code);
      else if ((grpcRetryOn as readonly string[]).includes(part)) grpc.push(part as GrpcRetryOn);
      else other.push(part);
    }
    if (codes.length > 0 && !other.includes("retriable-status-codes")) other.push("retriable-status-codes");
    Object.assign(out, { grpcRetryOn: grpc, otherRetryOn: other, retriableStatusCodes: codes });
  }
  if (typeof r.perTryTimeout === "string") out.perTryTimeoutMs = durationMs(r.perTryTimeout);
  return out;
}

/** A Percent as Envoy's FractionalPercent per million (uint32 conversion truncates, as in Go). */
function perMillion(p: unknown): number {
  const v = obj(p)?.value;
  return typeof v === "number" ? Math.trunc(v * 10000) : 0;
}

/** TranslateFault: an abort needs an HTTP or gRPC status, a delay a fixedDelay; neither ▶ no fault. */
function toFault(f: Raw | undefined): FaultPolicy | undefined {
  if (!f) return undefined;
  const out: FaultPolicy = {};
  const d = obj(f.delay);
  if (d && typeof d.fixedDelay === "string") {
    const pm =
      d.percentage != null ? perMillion(d.percentage) : ((d.percent as number | undefined) ?? 0) * 10000;
    out.delay = { perMillion: pm, fixedDelayMs: durationMs(d.fixedDelay) };
  }
  const a = obj(f.abort);
  if (a && typeof a.grpcStatus === "string")
    out.abort = { perMillion: perMillion(a.percentage), grpcStatus: grpcStatusCodes[a.grpcStatus] as number };
  else if (a && typeof a.httpStatus === "number")
    out.abort = { perMillion: perMillion(a.percentage), httpStatus: a.httpStatus };
  return out.delay || out.abort ? out : undefined;
}
