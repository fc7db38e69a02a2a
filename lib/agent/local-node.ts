/** Which local proxies the agent serves: every node of a pod claims the pod's namespace. */
import { nodeClaim } from "../auth/identity.ts";
import type { Node } from "../gen/envoy/config/core/v3/base_pb.ts";
import { logSafe } from "../log-safe.ts";

/**
 * Why the agent refuses a local proxy's node, or undefined when it serves it: the node must parse
 * as Istio's (`<type>~<ip>~<id>~<domain>`) and claim `namespace` (by metadata NAMESPACE or its
 * domain `<ns>.svc.<suffix>`), because the one upstream stream asks as that namespace for all of them.
 */
export function localNodeProblem(node: Node, namespace: string): string | undefined {
  const claim = nodeClaim(node);
  if (!claim.ok) return `edgepilot agent: ${claim.error}`;
  if (claim.namespace === namespace) return undefined;
  const claimed = claim.namespace === "" ? "no namespace" : `namespace ${logSafe(claim.namespace, 253)}`;
  return (
    `edgepilot agent: node ${logSafe(node.id, 256)} claims ${claimed}, but this agent serves the proxies of ` +
    `namespace ${logSafe(namespace)} (POD_NAMESPACE): a proxy may only ask through the agent of its own pod`
  );
}
