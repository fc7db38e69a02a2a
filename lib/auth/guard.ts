/**
 * The one decision every read path asks (via the Connect interceptor and the REST middleware in
 * functions/auth.ts): is this caller authenticated under XDS_AUTH, and may it send this node?
 * Pure: keys come from a KeySet, time from an injected clock.
 */
import type { Node } from "../gen/envoy/config/core/v3/base_pb.ts";
import type { XdsAuthConfig, XdsAuthMode } from "./config.ts";
import { authorizeNode, type Identity, identityFromClaims, type NodeDecision } from "./identity.ts";
import { verifyJwt } from "./jwt.ts";
import type { KeySet } from "./key-set.ts";
import { bearerToken, timingSafeEqual } from "./timing-safe.ts";

/** An identity, or why the caller is not authenticated (the message says what to send). */
export type AuthResult = { ok: true; identity: Identity } | { ok: false; message: string };

/** Where a node appears: an ADS stream's first request, a later one, or a unary read (Fetch, Poll, REST). */
export type NodePosition = "stream-first" | "stream-later" | "unary";

/** The check every read path asks; built once per runtime from XDS_AUTH. */
export interface XdsGuard {
  readonly mode: XdsAuthMode;
  /** Authenticates an `authorization` header value. */
  authenticate(authorization: string | null | undefined): Promise<AuthResult>;
  /**
   * Checks a request's node: required on a stream's first request (istiod: "missing node
   * information") and, with jwt, on every unary read; its namespace must be the identity's.
   */
  checkNode(identity: Identity, node: Node | undefined, position: NodePosition): NodeDecision;
}

/** What the guard needs besides its configuration: keys (jwt) and the clock. */
export interface GuardDeps {
  /** Required for jwt. */
  keys?: KeySet;
  now: () => number;
}

const anonymous: Identity = { method: "none", subject: "anonymous" };
const tokenIdentity: Identity = { method: "token", subject: "EDGEPILOT_XDS_TOKEN" };

/** Builds the guard for `config`. */
export function createXdsGuard(config: XdsAuthConfig, deps: GuardDeps): XdsGuard {
  const authenticate = async (header: string | null | undefined): Promise<AuthResult> => {
    if (config.mode === "none") return { ok: true, identity: anonymous };
    const token = bearerToken(header);
    if (config.mode === "token") {
      if (token === undefined)
        return {
          ok: false,
          message: "missing credentials: send `authorization: Bearer <EDGEPILOT_XDS_TOKEN>` (XDS_AUTH=token)",
        };
      return timingSafeEqual(token, config.token)
        ? { ok: true, identity: tokenIdentity }
        : { ok: false, message: "wrong bearer token: it is not EDGEPILOT_XDS_TOKEN (XDS_AUTH=token)" };
    }
    if (token === undefined)
      return {
        ok: false,
        message:
          "missing credentials: send `authorization: Bearer <service-account JWT>` whose audience is " +
          `${config.audiences.join(" or ")} (XDS_AUTH=jwt)`,
      };
    const keys = deps.keys;
    if (!keys) return { ok: false, message: "invalid token: no JWT keys are configured" };
    const verified = await verifyJwt(
      token,
      { issuer: config.issuer, audiences: config.audiences, algorithms: keys.algorithms },
      keys.resolve,
      deps.now(),
    );
    if (!verified.ok) return { ok: false, message: `invalid token: ${verified.error}` };
    const id = identityFromClaims(verified.claims);
    return id.ok ? id : { ok: false, message: `invalid token: ${id.error}` };
  };
  return {
    mode: config.mode,
    authenticate,
    checkNode,
  };
}

/**
 * The node rule of `identity`'s mode: a node is required on a stream's first request, and with
 * jwt on every unary read too; its namespace must be the identity's. Depends on the identity
 * alone, so the Durable Object applies it to an identity the Worker forwarded.
 */
export function checkNode(identity: Identity, node: Node | undefined, position: NodePosition): NodeDecision {
  const required = position === "stream-first" || (position === "unary" && identity.method === "jwt");
  return authorizeNode(identity, node, required);
}
