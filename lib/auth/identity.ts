/**
 * Who a verified caller is, and what its node may claim. As istiod does for Kubernetes
 * service-account JWTs: the identity's namespace (and service account) come from the bound
 * token's `kubernetes.io` claim or from `sub` = `system:serviceaccount:<ns>:<name>`; a node's
 * namespace is parsed as Istio's ParseServiceNodeWithMetadata and GetProxyConfigNamespace do
 * (metadata NAMESPACE first, else the `<ns>.svc.<suffix>` DNS domain of the node id), and a
 * proxy whose node names another namespace (or service account) than its token is refused.
 */
import type { Node } from "../gen/envoy/config/core/v3/base_pb.ts";
import { logSafe } from "../log-safe.ts";
import type { JwtClaims } from "./jwt.ts";

/** An authenticated caller. `namespace` limits what its nodes may claim; absent: any namespace. */
export interface Identity {
  /** How it was authenticated (XDS_AUTH). */
  method: "none" | "token" | "jwt";
  /** For logs: the JWT subject, or the method's name. */
  subject: string;
  namespace?: string;
  serviceAccount?: string;
}

const saSubject = /^system:serviceaccount:([^:]+):([^:]+)$/;

/** The identity a verified token's claims name; a token naming no namespace is refused. */
export function identityFromClaims(
  claims: JwtClaims,
): { ok: true; identity: Identity } | { ok: false; error: string } {
  const sub = typeof claims.sub === "string" ? claims.sub : "";
  const k8s = claims["kubernetes.io"] as
    | { namespace?: unknown; serviceaccount?: { name?: unknown } }
    | undefined;
  const fromSub = saSubject.exec(sub);
  const namespace = typeof k8s?.namespace === "string" ? k8s.namespace : fromSub?.[1];
  const sa = typeof k8s?.serviceaccount?.name === "string" ? k8s.serviceaccount.name : fromSub?.[2];
  if (!namespace)
    return {
      ok: false,
      error:
        "the token names no namespace: expected a Kubernetes service-account token (a kubernetes.io.namespace " +
        "claim, or sub system:serviceaccount:<namespace>:<name>)",
    };
  if (fromSub && (fromSub[1] !== namespace || (sa !== undefined && fromSub[2] !== sa)))
    return {
      ok: false,
      error: "the token's sub and its kubernetes.io claim name different service accounts",
    };
  return {
    ok: true,
    identity: {
      method: "jwt",
      subject: sub || `${namespace}/${sa ?? ""}`,
      namespace,
      ...(sa && { serviceAccount: sa }),
    },
  };
}

/** Istio's node types that may ask for configuration (pm.IsApplicationNodeType). */
const nodeTypes = new Set(["sidecar", "router", "waypoint"]);

/** What a node claims: its namespace ("" when it names none) and service account ("" likewise). */
export type NodeClaim =
  | { ok: true; namespace: string; serviceAccount: string }
  | { ok: false; error: string };

/** Parses a node as istiod does before it authorizes the connection. */
export function nodeClaim(node: Node): NodeClaim {
  const id = node.id;
  const parts = id.split("~");
  if (parts.length !== 4)
    return {
      ok: false,
      error: `missing parts in the service node ${logSafe(id)}: expected <type>~<ip>~<id>~<domain>`,
    };
  if (!nodeTypes.has(parts[0] ?? ""))
    return {
      ok: false,
      error: `invalid node type (valid types: ${[...nodeTypes].join(", ")}) in the service node ${logSafe(id)}`,
    };
  const meta = node.metadata ?? {};
  const metaNs = typeof meta.NAMESPACE === "string" ? meta.NAMESPACE : "";
  const domain = (parts[3] ?? "").split(".");
  const namespace = metaNs || (domain.length > 1 ? (domain[0] ?? "") : "");
  const serviceAccount = typeof meta.SERVICE_ACCOUNT === "string" ? meta.SERVICE_ACCOUNT : "";
  return { ok: true, namespace, serviceAccount };
}

/** Why a request's node was refused; `invalid-argument` for a missing or unparsable node. */
export type NodeDecision =
  | { ok: true }
  | { ok: false; code: "invalid-argument" | "permission-denied"; message: string };

/** The one "allowed" decision, shared and frozen: every request of every stream is checked (each ACK). */
const allowed: NodeDecision = Object.freeze({ ok: true });

/**
 * Whether `identity` may send a request with `node`. `nodeRequired`: the first request of an ADS
 * stream (always, as istiod), and every read in jwt mode (see docs/tasks/authenticating-proxies.md: answers depend on
 * the node's namespace, so a token-bound caller must say who it is).
 */
export function authorizeNode(
  identity: Identity,
  node: Node | undefined,
  nodeRequired: boolean,
): NodeDecision {
  if (!node || node.id === "") {
    if (!nodeRequired) return allowed;
    return {
      ok: false,
      code: "invalid-argument",
      message:
        identity.method === "jwt"
          ? "missing node information: with XDS_AUTH=jwt every request names its node (node.id), whose namespace is checked against the token"
          : "missing node information: the first request of a stream must carry node.id",
    };
  }
  if (identity.namespace === undefined) return allowed;
  const claim = nodeClaim(node);
  if (!claim.ok) return { ok: false, code: "invalid-argument", message: claim.error };
  const nsOk = claim.namespace === "" || claim.namespace === identity.namespace;
  const saOk =
    claim.serviceAccount === "" ||
    identity.serviceAccount === undefined ||
    claim.serviceAccount === identity.serviceAccount;
  if (nsOk && saOk) return allowed;
  return {
    ok: false,
    code: "permission-denied",
    message:
      `authorization failed: node ${logSafe(node.id, 256)} claims ${logSafe(`${claim.namespace}/${claim.serviceAccount}`, 256)} ` +
      `but its token is for ${logSafe(`${identity.namespace}/${identity.serviceAccount ?? "*"}`, 256)}: a proxy may only ask as its own namespace and service account`,
  };
}
