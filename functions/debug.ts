/**
 * The /debug/* endpoints (istiod's debug paths) on a hono app, runtime-neutral: Node mounts them on
 * PORT behind XDS_AUTH; the MeshStore Durable Object mounts them behind the identity the Worker
 * forwards (the Worker checks XDS_AUTH and forwards each request as ONE call, mountDebugForward).
 * Each path validates its query (400 naming the parameter), reads one bounded page through
 * lib/debug and answers JSON in istiod's shape; a `link: <...>; rel="next"` header points at the
 * next page when there is one. `?pretty` indents.
 */
import type { Context, Hono, MiddlewareHandler } from "hono";
import type { XdsGuard } from "../lib/auth/guard.ts";
import { readConfigDump } from "../lib/debug/config-dump.ts";
import { readConfigz, readRejected } from "../lib/debug/configz.ts";
import { readEndpointShardz } from "../lib/debug/endpoint-shardz.ts";
import { readMeshDebug } from "../lib/debug/mesh.ts";
import { readNetworkz } from "../lib/debug/networkz.ts";
import { type ParamSpec, type Parsed, parseParams } from "../lib/debug/params.ts";
import { readPushStatus } from "../lib/debug/push-status.ts";
import { readRegistryz } from "../lib/debug/registryz.ts";
import { readSyncz } from "../lib/debug/syncz.ts";
import { readAuthorizationz, readWorkloadMtls } from "../lib/debug/workload-security.ts";
import type { Store } from "../lib/store/store.ts";
import { maxNodeIdLength, nodeIdProblem } from "../lib/xds/proxy-record.ts";
import type { Views } from "../lib/xds/view-source.ts";
import { byForwardedIdentity, forwardedIdentityHeader, restAuth } from "./auth.ts";

/** What the debug paths read. */
export interface DebugDeps {
  store: Store;
  views: Views;
  now: () => number;
  /** The instance id of the state answering (the ISTIOD column of proxy-status). */
  instance: () => Promise<string>;
}

const name = { kind: "string", maxChars: 253 } as const;
const cursor = { kind: "string", maxChars: 2048 } as const;
const proxyID = { kind: "string", maxChars: maxNodeIdLength } as const;

/** Every path, its help line and its parameters (also what GET /debug/list answers). */
export const debugPaths = {
  "/debug/syncz": {
    help: "xDS sync status of every connected proxy (istiod's SyncStatus)",
    params: { limit: { kind: "limit", default: 500, max: 1000 }, cursor, proxyID },
  },
  "/debug/configz": {
    help: "Istio configs held; with ?rejected, the objects refused by their kind's rules; with ?mtls, every pod's effective mTLS mode",
    params: {
      limit: { kind: "limit", default: 100, max: 500 },
      cursor,
      kind: name,
      namespace: name,
      rejected: { kind: "flag" },
      mtls: { kind: "flag" },
    },
  },
  "/debug/registryz": {
    help: "services held, one record per cluster",
    params: { limit: { kind: "limit", default: 500, max: 1000 }, cursor, namespace: name },
  },
  "/debug/endpointShardz": {
    help: "endpoint shards per service and cluster",
    params: { limit: { kind: "limit", default: 50, max: 200 }, cursor, namespace: name, hostname: name },
  },
  "/debug/networkz": {
    help: "the networks as the last push resolved them: ranges, registries, cluster networks and gateways",
    params: {},
  },
  "/debug/push_status": {
    help: "recent pushes from the push log, newest first",
    params: { limit: { kind: "limit", default: 10, max: 50 }, before: { kind: "int", min: 1 } },
  },
  "/debug/config_dump": {
    help: "what one proxy was sent, as an Envoy ConfigDump (proxyID required)",
    params: { proxyID },
  },
  "/debug/authorizationz": {
    help: "the AuthorizationPolicies that apply to one proxy, by action, and its effective mTLS (proxyID required)",
    params: { proxyID },
  },
  "/debug/mesh": {
    help: "the stored mesh config and MeshNetworks (from the istio ConfigMap or the mesh files), with their source",
    params: {},
  },
  "/debug/list": { help: "these paths", params: {} },
} as const satisfies Record<string, { help: string; params: Record<string, ParamSpec> }>;

/** Whether `path` is a debug path (the Worker forwards these into the object). */
export function isDebugPath(path: string): boolean {
  return path === "/debug" || path.startsWith("/debug/");
}

/** Mounts every debug path on `app`, each behind `auth` (see the module comment). */
export function mountDebug(app: Hono, deps: DebugDeps, auth: MiddlewareHandler): void {
  const { store } = deps;
  app.use("/debug", auth);
  app.use("/debug/*", auth);
  route(app, deps, "/debug/syncz", async (q) => {
    if (q.proxyID !== undefined) {
      const problem = nodeIdProblem(q.proxyID);
      if (problem)
        return { ok: false, error: `query parameter proxyID ${problem.replace(/^node\.id /, "")}` };
    }
    return page(await readSyncz(store, { ...q, now: deps.now() }), "/debug/syncz", q);
  });
  route(app, deps, "/debug/configz", async (q) => {
    if (q.rejected && q.mtls)
      return { ok: false, error: "query parameters rejected and mtls are two listings; ask one" };
    if (q.mtls && (q.kind !== undefined || q.namespace !== undefined))
      return {
        ok: false,
        error: "query parameter mtls takes no kind or namespace (pods are kept by cluster)",
      };
    if (q.mtls) return page(await readWorkloadMtls(store, q), "/debug/configz", q);
    return q.rejected
      ? page(await readRejected(store, q), "/debug/configz", q)
      : page(await readConfigz(store, q), "/debug/configz", q);
  });
  route(app, deps, "/debug/registryz", async (q) =>
    page(await readRegistryz(store, q), "/debug/registryz", q),
  );
  route(app, deps, "/debug/endpointShardz", async (q) => {
    const r = await readEndpointShardz(store, q);
    if (!r.ok) return r;
    return {
      ok: true,
      value: { body: r.value.shardz, next: nextLink("/debug/endpointShardz", q, "cursor", r.value.next) },
    };
  });
  route(app, deps, "/debug/networkz", async () => ({ ok: true, value: { body: await readNetworkz(store) } }));
  route(app, deps, "/debug/push_status", async (q) => {
    const r = await readPushStatus(store, q);
    return { ok: true, value: { body: r.status, next: nextLink("/debug/push_status", q, "before", r.next) } };
  });
  route(app, deps, "/debug/config_dump", async (q) => {
    const id = requiredProxyId(q.proxyID);
    if (!id.ok) return id;
    const r = await readConfigDump(store, deps.views, { proxyID: id.value, now: deps.now() });
    if (!r.ok) return { ok: false, error: r.error, status: 404 };
    return { ok: true, value: { body: r.dump } };
  });
  route(app, deps, "/debug/authorizationz", async (q) => {
    const id = requiredProxyId(q.proxyID);
    if (!id.ok) return id;
    const r = await readAuthorizationz(store, { proxyID: id.value, now: deps.now() });
    if (!r.ok) return { ok: false, error: r.error, status: 404 };
    return { ok: true, value: { body: r.body } };
  });
  route(app, deps, "/debug/mesh", async () => ({ ok: true, value: { body: await readMeshDebug(store) } }));
  route(app, deps, "/debug/list", async () => ({
    ok: true,
    value: {
      body: Object.entries(debugPaths).map(([path, p]) => ({
        path,
        help: p.help,
        params: Object.keys(p.params),
      })),
    },
  }));
  app.get("/debug", (c) => c.redirect("/debug/list"));
}

type Answer = Parsed<{ body: unknown; next?: string }> | { ok: false; error: string; status: 404 };

/** A required proxyID, or why it cannot name a proxy (absent, or no node id edgepilot serves). */
function requiredProxyId(proxyID: string | undefined): Parsed<string> {
  if (proxyID === undefined)
    return {
      ok: false,
      error: "query parameter proxyID is required (a node id, as /debug/syncz lists them)",
    };
  const problem = nodeIdProblem(proxyID);
  return problem
    ? { ok: false, error: `query parameter proxyID ${problem.replace(/^node\.id /, "")}` }
    : { ok: true, value: proxyID };
}

type Query<P extends keyof typeof debugPaths> = Extract<
  ReturnType<typeof parseParams<(typeof debugPaths)[P]["params"]>>,
  { ok: true }
>["value"];

function route<P extends keyof typeof debugPaths>(
  app: Hono,
  deps: DebugDeps,
  path: P,
  answer: (q: Query<P>) => Promise<Answer>,
): void {
  app.get(path, async (c) => {
    const parsed = parseParams(c.req.queries(), debugPaths[path].params);
    const result = parsed.ok ? await answer(parsed.value as Query<P>) : parsed;
    const headers: Record<string, string> = { "x-edgepilot-instance": await deps.instance() };
    if (!result.ok) return c.json({ error: result.error }, "status" in result ? result.status : 400, headers);
    if (result.value.next !== undefined) headers.link = `<${result.value.next}>; rel="next"`;
    return json(c, result.value.body, headers);
  });
}

function json(c: Context, body: unknown, headers: Record<string, string>): Response {
  const pretty = c.req.query("pretty") !== undefined;
  return c.body(`${JSON.stringify(body, null, pretty ? 2 : undefined)}\n`, 200, {
    ...headers,
    "content-type": "application/json",
  });
}

/** A list page's answer: the items as istiod's array, the next page as a link. */
function page<T>(r: Parsed<{ items: T[]; next?: string }>, path: string, q: Record<string, unknown>): Answer {
  if (!r.ok) return r;
  return { ok: true, value: { body: r.value.items, next: nextLink(path, q, "cursor", r.value.next) } };
}

/** The relative URL of the next page: the same query with `param` set to `value`. */
function nextLink(
  path: string,
  q: Record<string, unknown>,
  param: string,
  value: string | number | undefined,
) {
  if (value === undefined) return undefined;
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(q))
    if (v !== undefined && v !== false && k !== param) search.set(k, String(v));
  search.set(param, String(value));
  return `${path}?${search}`;
}

/** The MeshStore's guard of the debug paths: the identity the Worker verified and forwarded, or 401. */
export const forwardedDebugAuth: MiddlewareHandler = async (c, next) => {
  const auth = await byForwardedIdentity(c.req.raw.headers);
  if (!auth.ok) return c.json({ error: auth.message }, 401);
  c.set("xdsIdentity", auth.identity);
  await next();
};

/**
 * The Worker's debug paths: XDS_AUTH checked here, then each GET forwarded as ONE call into the
 * MeshStore, which answers from its own store (the identity goes along, as for Poll and Watch).
 */
export function mountDebugForward(
  app: Hono,
  guard: XdsGuard,
  forward: (request: Request) => Promise<Response>,
): void {
  const auth = restAuth(guard);
  const handler = (c: Context) => {
    const headers = new Headers(c.req.raw.headers);
    headers.set(forwardedIdentityHeader, JSON.stringify(c.get("xdsIdentity")));
    return forward(new Request(c.req.raw.url, { method: "GET", headers }));
  };
  app.get("/debug", auth, handler);
  app.get("/debug/*", auth, handler);
}
