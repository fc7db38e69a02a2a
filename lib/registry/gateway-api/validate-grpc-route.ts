/**
 * GRPCRoute (gateway.networking.k8s.io v1; v1alpha2 in older releases, one schema) as the
 * standard-channel CRD checks it: parentRefs, hostnames, rules with method and header matches,
 * header modifier, mirror and extensionRef filters, and backendRefs. Messages of CEL rules are
 * the CRD's. The API server defaults a method match's `type` to Exact, so its rules always apply.
 */
import { all, type Check } from "../check.ts";
import {
  backendRef,
  extensionRef,
  filter,
  filterList,
  headerMatches,
  headerModifier,
  hostnames,
  parentRefs,
  requestMirror,
  ruleName,
  totalMatches,
} from "./validate-route-common.ts";
import { enumOf, get, has, list, obj, specOf, text } from "./validate-schema.ts";

const serviceSyntax = /^\.?[a-z_][a-z_0-9]*(\.[a-z_][a-z_0-9]*)*$/i;
const methodSyntax = /^[A-Za-z_][A-Za-z_0-9]*$/;
const exact = (m: Record<string, unknown>) => get(m, "type", "Exact") === "Exact";

/** GRPCMethodMatch: a service, a method or both; exact names of gRPC syntax. */
const methodMatch: Check = obj(
  { type: enumOf(["Exact", "RegularExpression"]), service: text({ max: 1024 }), method: text({ max: 1024 }) },
  [],
  [
    [(m) => has(m, "service") || has(m, "method"), "One or both of 'service' or 'method' must be specified"],
    [
      (m) => !(exact(m) && has(m, "service")) || serviceSyntax.test(m.service as string),
      "service must only contain valid characters (matching ^(?i)\\.?[a-z_][a-z_0-9]*(\\.[a-z_][a-z_0-9]*)*$)",
    ],
    [
      (m) => !(exact(m) && has(m, "method")) || methodSyntax.test(m.method as string),
      "method must only contain valid characters (matching ^[A-Za-z_][A-Za-z_0-9]*$)",
    ],
  ],
);

const grpcFilter: Check = filter(
  ["ResponseHeaderModifier", "RequestHeaderModifier", "RequestMirror", "ExtensionRef"],
  {
    requestHeaderModifier: ["RequestHeaderModifier", headerModifier],
    responseHeaderModifier: ["ResponseHeaderModifier", headerModifier],
    requestMirror: ["RequestMirror", requestMirror],
    extensionRef: ["ExtensionRef", extensionRef],
  },
);

const grpcFilters = filterList(grpcFilter, ["RequestHeaderModifier", "ResponseHeaderModifier"]);

const rule: Check = obj({
  name: ruleName,
  matches: list(obj({ method: methodMatch, headers: headerMatches }), { max: 64 }),
  filters: grpcFilters,
  backendRefs: list(backendRef(grpcFilters), { max: 16 }),
});

const spec: Check = obj({ parentRefs, hostnames, rules: all(list(rule, { max: 16 }), totalMatches(0)) });

/** Checks a GRPCRoute object's `spec` as the Gateway API's CRD does. */
export const grpcRouteCheck: Check = (o, path) => specOf(o, path, spec);
