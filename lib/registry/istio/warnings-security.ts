/**
 * istiod's warnings for a valid PeerAuthentication or AuthorizationPolicy: a selector without
 * labels (it selects the whole namespace), and a DENY rule that matches on HTTP attributes only,
 * which denies every TCP connection in its scope. Messages are istiod's, prefixed by the field path.
 */
import { isObject } from "../check.ts";
import { listOf } from "./validate-authorization-policy.ts";

type Raw = Record<string, unknown>;

const noLabels = "workload selector specified without labels";

function selectorWarnings(s: Raw): string[] {
  const selector = s.selector;
  if (!isObject(selector)) return [];
  const labels = isObject(selector.matchLabels) ? selector.matchLabels : {};
  return Object.keys(labels).length === 0 ? [`spec.selector: ${noLabels}`] : [];
}

/** Source fields that a TCP connection carries (the rest need HTTP). */
const tcpSource = [
  "principals",
  "notPrincipals",
  "ipBlocks",
  "notIpBlocks",
  "namespaces",
  "notNamespaces",
  "remoteIpBlocks",
  "notRemoteIpBlocks",
  "serviceAccounts",
  "notServiceAccounts",
];

/**
 * The rule-level warning of ValidateAuthorizationPolicy: a DENY rule with only HTTP attributes in
 * `from` (and no `to`), or a `to` without ports, applies to TCP traffic as "deny all".
 */
function denyWarnings(s: Raw): string[] {
  if (s.action !== "DENY") return [];
  const out: string[] = [];
  listOf(s, "rules").forEach((rule, i) => {
    if (!isObject(rule)) return;
    const sources = listOf(rule, "from").flatMap((f) =>
      isObject(f) && isObject(f.source) ? [f.source] : [],
    );
    const operations = listOf(rule, "to").flatMap((t) =>
      isObject(t) && isObject(t.operation) ? [t.operation] : [],
    );
    // istiod reads a field as set when it is non-nil: proto JSON gives [] as nil, so a list counts when non-empty.
    const set = (o: Raw, k: string) => listOf(o, k).length > 0;
    const tcpFrom = sources.some((src) => tcpSource.some((k) => set(src, k)));
    const tcpTo = operations.some((op) => set(op, "ports") || set(op, "notPorts"));
    const from = sources.length > 0;
    const to = operations.length > 0;
    if ((from && !to && !tcpFrom) || (to && !tcpTo))
      out.push(
        `spec.rules[${i}]: configured AuthorizationPolicy will deny all traffic to TCP ports under its scope due to the use of only HTTP attributes in a DENY rule; it is recommended to explicitly specify the port`,
      );
  });
  return out;
}

/** Istio's warnings for a valid security.istio.io object; [] for any other kind. */
export function securityWarnings(kind: string, spec: Raw): string[] {
  if (kind === "PeerAuthentication") return selectorWarnings(spec);
  if (kind === "AuthorizationPolicy") return [...selectorWarnings(spec), ...denyWarnings(spec)];
  return [];
}
