/**
 * XDS_AUTH on every read path, one mechanism per transport: a Connect interceptor (ADS SotW and
 * Delta, Fetch*, Poll/Watch, StatusService — on Node's h2c and HTTP/1.1 routers, the Worker's and
 * the Durable Object's) and a hono middleware for REST-JSON. Both ask lib/auth's XdsGuard, so the
 * rules cannot drift. The identity reaches handlers as the `identityKey` context value.
 */
import { Code, ConnectError, createContextKey, type Interceptor } from "@connectrpc/connect";
import type { MiddlewareHandler } from "hono";
import {
  type AuthResult,
  checkNode,
  type Identity,
  type NodeDecision,
  type NodePosition,
  type XdsGuard,
} from "../lib/auth/index.ts";
import type { Node } from "../lib/gen/envoy/config/core/v3/base_pb.ts";
import { logWarn } from "../lib/log/line-log.ts";

/** The caller's identity, set by the interceptor before any handler runs. */
export const identityKey = createContextKey<Identity | undefined>(undefined, { description: "xds identity" });

declare module "hono" {
  interface ContextVariableMap {
    xdsIdentity: Identity;
  }
}

/** The Connect code of a refused node. */
export function nodeRefusal(decision: Exclude<NodeDecision, { ok: true }>): ConnectError {
  return new ConnectError(
    decision.message,
    decision.code === "invalid-argument" ? Code.InvalidArgument : Code.PermissionDenied,
  );
}

/** Who sent a request, from its headers. */
export type Authenticate = (headers: Headers) => Promise<AuthResult>;

/** XDS_AUTH's check of the `authorization` header. */
export const byGuard =
  (guard: XdsGuard): Authenticate =>
  (headers) =>
    guard.authenticate(headers.get("authorization"));

/**
 * The header carrying the identity the Worker verified into the MeshStore (poll-forward.ts sets
 * it after authenticating and strips any value a client sent; the object is reachable only
 * through its binding, so nothing else can set it).
 */
export const forwardedIdentityHeader = "x-edgepilot-identity";

/** The MeshStore's check: the identity the Worker forwarded, or Unauthenticated. */
export const byForwardedIdentity: Authenticate = async (headers) => {
  const raw = headers.get(forwardedIdentityHeader);
  try {
    const id = raw === null ? undefined : (JSON.parse(raw) as Identity);
    if (id && ["none", "token", "jwt"].includes(id.method) && typeof id.subject === "string")
      return { ok: true, identity: id };
  } catch {
    // fall through: refused below
  }
  return { ok: false, message: "not authenticated: Poll and Watch reach the mesh only through the Worker" };
};

/**
 * Authenticates every call (Unauthenticated with what to send), then checks each request message
 * that carries a node: an ADS stream's first request must have one; its namespace must be the
 * identity's (PermissionDenied, logged). Messages without a node field (GetStatus) are not node-checked.
 */
export function createAuthInterceptor(authenticate: Authenticate, log?: (line: string) => void): Interceptor {
  return (next) => async (req) => {
    const auth = await authenticate(req.header);
    if (!auth.ok) throw new ConnectError(auth.message, Code.Unauthenticated);
    const identity = auth.identity;
    req.contextValues.set(identityKey, identity);
    const check = nodeChecker(identity, req.method.name, log);
    if (!req.stream) {
      check(req.message, "unary");
      return next(req);
    }
    const stream = req.method.methodKind === "bidi_streaming" || req.method.methodKind === "client_streaming";
    return next({ ...req, message: checked(req.message, stream, check) });
  };
}

/**
 * The node check of one call by `identity` (every transport runs this one): a message carrying a
 * node must name the identity's namespace; refusals throw the ConnectError to end the call with,
 * and a verified caller asking as someone else is logged (its text is escaped: identity.ts).
 */
export function nodeChecker(
  identity: Identity,
  methodName: string,
  log?: (line: string) => void,
): (message: unknown, position: NodePosition) => void {
  return (message, position) => {
    const carried = nodeOf(message);
    if (!carried.carries) return;
    const decision = checkNode(identity, carried.node, position);
    if (decision.ok) return;
    if (decision.code === "permission-denied" && log)
      logWarn(log, `xds: refused ${methodName}: ${decision.message}`);
    throw nodeRefusal(decision);
  };
}

async function* checked<T>(
  messages: AsyncIterable<T>,
  stream: boolean,
  check: (message: unknown, position: NodePosition) => void,
): AsyncGenerator<T> {
  let first = true;
  for await (const m of messages) {
    check(m, stream ? (first ? "stream-first" : "stream-later") : "unary");
    first = false;
    yield m;
  }
}

/** Where a request message keeps its node: DiscoveryRequest, DeltaDiscoveryRequest, PollRequest. */
function nodeOf(message: unknown): { carries: boolean; node?: Node } {
  const m = message as { $typeName?: string; node?: Node; request?: { node?: Node } } | undefined;
  switch (m?.$typeName) {
    case "envoy.service.discovery.v3.DiscoveryRequest":
    case "envoy.service.discovery.v3.DeltaDiscoveryRequest":
      return { carries: true, node: m.node };
    case "edgepilot.xds.v1.PollRequest":
      return { carries: true, node: m.request?.node };
    default:
      return { carries: false };
  }
}

/** REST-JSON's gate: 401 JSON `{ error }` with what to send, else the identity as `xdsIdentity`. */
export function restAuth(guard: XdsGuard): MiddlewareHandler {
  return async (c, next) => {
    const auth = await guard.authenticate(c.req.header("authorization"));
    if (!auth.ok)
      return c.json({ error: auth.message }, 401, { "www-authenticate": 'Bearer realm="edgepilot-xds"' });
    c.set("xdsIdentity", auth.identity);
    await next();
  };
}
