/**
 * One AuthorizationPolicy attribute (a source or operation field, or a `when` key) ▶ the Envoy RBAC
 * permission or principal istiod's authz/model generator.go writes for its values. A value the
 * target cannot enforce (an HTTP attribute on a TCP chain, a matcher proxyless gRPC lacks) or
 * cannot parse is an Error, which the policy model turns into istiod's fail-closed rule. Pure.
 */

import { create } from "@bufbuild/protobuf";
import type { Permission, Principal } from "../../gen/envoy/config/rbac/v3/rbac_pb.ts";
import {
  ListMatcherSchema,
  type ValueMatcher,
  ValueMatcherSchema,
} from "../../gen/envoy/type/matcher/v3/value_pb.ts";
import { cidrRange } from "./cidr.ts";
import {
  exactMatcher,
  headerMatcher,
  hostMatcher,
  jwtClaimMatcher,
  jwtClaimsMatcher,
  metadataValueMatcher,
  orValueMatcher,
  pathMatcher,
  prefixMatcher,
  quoteMeta,
  regexMatcher,
  stringMatcher,
  stringOrMatcher,
  stringValueMatcher,
  suffixMatcher,
} from "./matchers.ts";
import * as n from "./rbac-nodes.ts";

/** What enforces the filter: an Envoy HTTP chain, an Envoy TCP chain, or a proxyless gRPC server. */
export type AuthzTarget = "http" | "tcp" | "grpc";

/** Turns one value, or (extended) all values at once, into a permission or a principal. */
export type AttributeGenerator =
  | { side: "permission"; one: (key: string, value: string, target: AuthzTarget) => Permission | Error }
  | {
      side: "permission";
      all: (key: string, values: readonly string[], target: AuthzTarget) => Permission | Error;
    }
  | { side: "principal"; one: (key: string, value: string, target: AuthzTarget) => Principal | Error }
  | {
      side: "principal";
      all: (key: string, values: readonly string[], target: AuthzTarget) => Principal | Error;
    };

/** The spiffe:// prefix source principals are matched with (istiod's spiffe.URIPrefix). */
export const SPIFFE_PREFIX = "spiffe://";

const httpOnly = (key: string, target: AuthzTarget) =>
  target === "tcp" ? new Error(`"${key}" is HTTP only`) : undefined;
/** Dynamic metadata (JWT claims, other filters' state): a proxyless gRPC server never has it. */
const needsMetadata = (key: string, target: AuthzTarget) =>
  httpOnly(key, target) ??
  (target === "grpc" ? new Error(`"${key}" is not supported by proxyless gRPC`) : undefined);

/** istiod's convertToPort: a decimal port in [0, 65535]. */
function toPort(value: string): number | Error {
  if (!/^[0-9]+$/.test(value) || Number(value) > 65535) return new Error(`invalid port ${value}`);
  return Number(value);
}

/** `[name]` ▶ name (istiod's extractNameInBrackets). */
function nameInBrackets(s: string): string | Error {
  if (!s.startsWith("[") || !s.endsWith("]")) return new Error(`expecting format [<NAME>], but found ${s}`);
  return s.slice(1, -1);
}

/** `[a][b]` ▶ [a, b]; anything else as one bracketed name (istiod's extractNameInNestedBrackets). */
function namesInNestedBrackets(s: string): string[] | Error {
  const names: string[] = [];
  for (let begin = 0; begin < s.length; ) {
    const end = s[begin] === "[" ? s.slice(begin + 1).search(/[[\]]/) + begin + 1 : -1;
    if (end <= begin || s[end] !== "]") {
      const one = nameInBrackets(s);
      return one instanceof Error ? one : [one];
    }
    names.push(s.slice(begin + 1, end));
    begin = end + 1;
  }
  return names;
}

const mapCidr = <T>(value: string, f: (c: Exclude<ReturnType<typeof cidrRange>, Error>) => T): T | Error => {
  const c = cidrRange(value);
  return c instanceof Error ? c : f(c);
};

/** Whether a path uses Istio's `{*}` / `{**}` templates (security.ContainsPathTemplate). */
export const containsPathTemplate = (path: string) => path.includes("{*}") || path.includes("{**}");

/** `request.auth.principal` values (`iss/sub`, `*` wildcards on either side) as JWT iss and sub matches. */
function requestPrincipal(value: string): Principal {
  const any = regexMatcher(".+");
  const idx = value.lastIndexOf("/");
  const found = idx >= 0;
  const iss = found ? value.slice(0, idx) : value;
  const sub = found ? value.slice(idx + 1) : "";
  let mIss = exactMatcher(iss);
  let mSub = exactMatcher(sub);
  if (value === "*") [mIss, mSub] = [any, any];
  else if (value.startsWith("*")) {
    if (found) [mIss, mSub] = [iss === "*" ? any : suffixMatcher(iss.slice(1)), exactMatcher(sub)];
    else [mIss, mSub] = [any, suffixMatcher(value.slice(1))];
  } else if (value.endsWith("*")) {
    if (found) [mIss, mSub] = [exactMatcher(iss), sub === "*" ? any : prefixMatcher(sub.slice(0, -1))];
    else [mIss, mSub] = [prefixMatcher(value.slice(0, -1)), any];
  }
  return n.principalAnd([
    n.principalMetadata(jwtClaimMatcher("iss", mIss)),
    n.principalMetadata(jwtClaimMatcher("sub", mSub)),
  ]);
}

/** `source.serviceAccount` (`sa` in the policy's namespace, or `ns/sa`) as a SPIFFE regex. */
export function serviceAccountRegex(defaultNamespace: string, value: string): string {
  const slash = value.indexOf("/");
  const [ns, sa] = slash < 0 ? [defaultNamespace, value] : [value.slice(0, slash), value.slice(slash + 1)];
  return `spiffe://.+/ns/${quoteMeta(ns)}/(.+/|)sa/${quoteMeta(sa)}(/.+)?`;
}

/** `experimental.envoy.filters.a.b[c]` ▶ filter `envoy.filters.a.b`, key `c`; values `[v]` match in a list. */
function envoyFilterPermission(key: string, values: readonly string[]): Permission | Error {
  const body = key.slice("experimental.".length).replace(/\]$/, "");
  const open = body.indexOf("[");
  if (open < 0) return new Error(`invalid key: ${key}`);
  const matchers: ValueMatcher[] = values.map((v) =>
    v.startsWith("[") && v.endsWith("]")
      ? create(ValueMatcherSchema, {
          matchPattern: {
            case: "listMatch",
            value: create(ListMatcherSchema, {
              matchPattern: {
                case: "oneOf",
                value: stringValueMatcher(stringMatcher(v.replace(/^[[\]]+|[[\]]+$/g, ""))),
              },
            }),
          },
        })
      : stringValueMatcher(stringMatcher(v)),
  );
  return n.permissionMetadata(
    metadataValueMatcher(body.slice(0, open), [body.slice(open + 1)], orValueMatcher(matchers)),
  );
}

/** The generator of each attribute, by istiod's attribute name (`when` keys and the fields they mirror). */
export const generators = {
  destinationIp: { side: "permission", one: (_k, v) => mapCidr(v, n.permissionDestinationIp) },
  destinationPort: {
    side: "permission",
    one: (_k, v) => {
      const p = toPort(v);
      return p instanceof Error ? p : n.permissionDestinationPort(p);
    },
  },
  connectionSni: {
    side: "permission",
    // gRPC compares requested_server_name with the empty string only (gRFC A41): never the SNI.
    one: (k, v, t) =>
      t === "grpc"
        ? new Error(`"${k}" is not supported by proxyless gRPC`)
        : n.permissionRequestedServerName(stringMatcher(v)),
  },
  envoyFilter: {
    side: "permission",
    all: (k, vs, t) =>
      t === "grpc" ? new Error(`"${k}" is not supported by proxyless gRPC`) : envoyFilterPermission(k, vs),
  },
  host: {
    side: "permission",
    one: (k, v, t) => httpOnly(k, t) ?? n.permissionHeader(hostMatcher(":authority", v)),
  },
  method: {
    side: "permission",
    one: (k, v, t) => httpOnly(k, t) ?? n.permissionHeader(headerMatcher(":method", v)),
  },
  path: {
    side: "permission",
    one: (k, v, t) => {
      const bad = httpOnly(k, t);
      if (bad) return bad;
      if (!containsPathTemplate(v)) return n.permissionPath(pathMatcher(v));
      // gRPC has no uri_template matcher: it would never match.
      if (t === "grpc") return new Error(`path template "${v}" is not supported by proxyless gRPC`);
      return n.permissionPathTemplate(v.replaceAll("{**}", "**").replaceAll("{*}", "*"));
    },
  },
  sourceIp: { side: "principal", one: (_k, v) => mapCidr(v, n.principalDirectRemoteIp) },
  remoteIp: { side: "principal", one: (_k, v) => mapCidr(v, n.principalRemoteIp) },
  sourceNamespace: {
    side: "principal",
    one: (_k, v) =>
      n.principalAuthenticated(regexMatcher(`.*/ns/${v.split("*").map(quoteMeta).join(".*")}/.*`)),
  },
  sourceTrustDomain: {
    side: "principal",
    one: (_k, v) => {
      if (v === "*") return n.principalAuthenticated(prefixMatcher(SPIFFE_PREFIX));
      if (!v.includes("*")) return n.principalAuthenticated(prefixMatcher(`${SPIFFE_PREFIX}${v}/`));
      const star = v.indexOf("*");
      const escaped = `${quoteMeta(v.slice(0, star))}[^/]*${quoteMeta(v.slice(star + 1))}`;
      return n.principalAuthenticated(regexMatcher(`${SPIFFE_PREFIX}${escaped}/.*`));
    },
  },
  sourcePrincipal: {
    side: "principal",
    one: (_k, v) => n.principalAuthenticated(stringMatcher(v, SPIFFE_PREFIX)),
  },
  requestPrincipal: {
    side: "principal",
    all: (k, vs, t) => {
      const bad = needsMetadata(k, t);
      if (bad) return bad;
      const ids = vs.map(requestPrincipal);
      return ids.length === 1 ? (ids[0] as Principal) : n.principalOr(ids);
    },
  },
  requestAudiences: {
    side: "principal",
    all: (k, vs, t) =>
      needsMetadata(k, t) ?? n.principalMetadata(jwtClaimsMatcher(["aud"], stringOrMatcher(vs))),
  },
  requestPresenter: {
    side: "principal",
    all: (k, vs, t) =>
      needsMetadata(k, t) ?? n.principalMetadata(jwtClaimsMatcher(["azp"], stringOrMatcher(vs))),
  },
  requestHeader: {
    side: "principal",
    one: (k, v, t) => {
      const bad = httpOnly(k, t);
      if (bad) return bad;
      const name = nameInBrackets(k.slice("request.headers".length));
      return name instanceof Error ? name : n.principalHeader(headerMatcher(name, v));
    },
  },
  requestClaims: {
    side: "principal",
    all: (k, vs, t) => {
      const bad = needsMetadata(k, t);
      if (bad) return bad;
      const claims = namesInNestedBrackets(k.slice("request.auth.claims".length));
      return claims instanceof Error
        ? claims
        : n.principalMetadata(jwtClaimsMatcher(claims, stringOrMatcher(vs)));
    },
  },
} satisfies Record<string, AttributeGenerator>;

/** A `source.serviceAccount` generator for a policy of `namespace` (a bare account is in the policy's namespace). */
export const serviceAccountGenerator = (namespace: string): AttributeGenerator => ({
  side: "principal",
  one: (_k, v) => n.principalAuthenticated(regexMatcher(serviceAccountRegex(namespace, v))),
});
