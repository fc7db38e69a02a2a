/**
 * AuthorizationPolicy as istiod's validation webhook checks it (ValidateAuthorizationPolicy), with
 * the CRD's types and bounds, first problem only, with the field path from the object: selector or
 * targetRef(s) (one kind of them), CUSTOM needs a provider and rules and takes no identity match,
 * a provider only with CUSTOM, DENY needs rules, and each rule's sources, operations and
 * conditions (security-values.ts). An empty list is an absent one, as proto JSON reads it.
 * Warnings: warnings-security.ts.
 */
import { type Check, child, isObject, oneOf, typeName } from "../check.ts";
import { istioMetadata, workloadSelector } from "./common.ts";
import {
  attributeProblem,
  emptyValueProblem,
  ipsProblem,
  pathTemplateProblem,
  portsProblem,
  serviceAccountProblem,
  trustDomainProblem,
} from "./security-values.ts";
import { has, type P, str } from "./validate-fields.ts";

type Raw = Record<string, unknown>;
const actions = ["ALLOW", "DENY", "AUDIT", "CUSTOM"];

/** A list field as proto JSON reads it: absent, null and [] are all none. */
export const listOf = (o: Raw, k: string): unknown[] => (Array.isArray(o[k]) ? (o[k] as unknown[]) : []);

/** The CRD's type of a string list, with its bounds. */
function stringList(v: unknown, path: string, maxItems?: number, maxLength?: number): P {
  if (!Array.isArray(v)) return { field: path, message: `must be an array, got ${typeName(v)}` };
  if (maxItems !== undefined && v.length > maxItems)
    return { field: path, message: `must have at most ${maxItems} items, got ${v.length}` };
  for (let i = 0; i < v.length; i++) {
    if (typeof v[i] !== "string")
      return { field: `${path}[${i}]`, message: `must be a string, got ${typeName(v[i])}` };
    if (maxLength !== undefined && (v[i] as string).length > maxLength)
      return { field: `${path}[${i}]`, message: `must be at most ${maxLength} characters` };
  }
  return undefined;
}

/** A list-wide check's problem, at the first item that fails alone (else at the list). */
function valuesProblem(
  values: readonly string[],
  path: string,
  check: (values: readonly string[]) => string | undefined,
): P {
  const message = check(values);
  if (!message) return undefined;
  const i = values.findIndex((v) => check([v]) !== undefined);
  return { field: i < 0 ? path : `${path}[${i}]`, message };
}

const sourceFields: Record<string, (values: readonly string[]) => string | undefined> = {
  principals: (v) => emptyValueProblem("Principals", v),
  requestPrincipals: (v) => emptyValueProblem("RequestPrincipals", v),
  namespaces: (v) => emptyValueProblem("Namespaces", v),
  serviceAccounts: (v) => serviceAccountProblem("ServiceAccounts", v),
  trustDomains: (v) => trustDomainProblem("TrustDomains", v),
  ipBlocks: (v) => ipsProblem(v) ?? emptyValueProblem("IpBlocks", v),
  remoteIpBlocks: (v) => ipsProblem(v) ?? emptyValueProblem("RemoteIpBlocks", v),
  notPrincipals: (v) => emptyValueProblem("NotPrincipals", v),
  notRequestPrincipals: (v) => emptyValueProblem("NotRequestPrincipals", v),
  notNamespaces: (v) => emptyValueProblem("NotNamespaces", v),
  notServiceAccounts: (v) => serviceAccountProblem("NotServiceAccounts", v),
  notTrustDomains: (v) => trustDomainProblem("NotTrustDomains", v),
  notIpBlocks: (v) => ipsProblem(v) ?? emptyValueProblem("NotIpBlocks", v),
  notRemoteIpBlocks: (v) => ipsProblem(v) ?? emptyValueProblem("NotRemoteIpBlocks", v),
};

const operationFields: Record<string, (values: readonly string[]) => string | undefined> = {
  hosts: (v) => emptyValueProblem("Hosts", v),
  ports: (v) => portsProblem(v) ?? emptyValueProblem("Ports", v),
  methods: (v) => emptyValueProblem("Methods", v),
  paths: (v) => emptyValueProblem("Paths", v) ?? pathTemplateProblem("Paths", v),
  notHosts: (v) => emptyValueProblem("NotHosts", v),
  notPorts: (v) => portsProblem(v) ?? emptyValueProblem("NotPorts", v),
  notMethods: (v) => emptyValueProblem("NotMethods", v),
  notPaths: (v) => emptyValueProblem("NotPaths", v) ?? pathTemplateProblem("NotPaths", v),
};

/** Checks the listed string lists of `o`; `none` when all of them are empty. */
function matchFields(
  o: Raw,
  path: string,
  checks: Record<string, (values: readonly string[]) => string | undefined>,
  none: string,
): P {
  let any = false;
  for (const [k, check] of Object.entries(checks)) {
    if (!has(o, k)) continue;
    const at = child(path, k);
    const limit = k === "serviceAccounts" || k === "notServiceAccounts" ? 16 : undefined;
    const p = stringList(o[k], at, limit, limit && 320);
    if (p) return p;
    const values = o[k] as string[];
    any ||= values.length > 0;
    const q = valuesProblem(values, at, check);
    if (q) return q;
  }
  return any ? undefined : { field: path, message: none };
}

/** The identity matches a CUSTOM rule may not use (istiod: not supported with CUSTOM action). */
const customSourceFields: Record<string, string> = {
  namespaces: "From.Namespaces",
  notNamespaces: "From.NotNamespaces",
  serviceAccounts: "From.ServiceAccounts",
  notServiceAccounts: "From.NotServiceAccounts",
  trustDomains: "From.TrustDomains",
  notTrustDomains: "From.NotTrustDomains",
  principals: "From.Principals",
  notPrincipals: "From.NotPrincipals",
  requestPrincipals: "From.RequestPrincipals",
  notRequestPrincipals: "From.NotRequestPrincipals",
};
const customKeys = ["source.namespace", "source.serviceAccount", "source.trustDomain", "source.principal"];

function customRule(rule: Raw, at: string): P {
  for (const [j, from] of listOf(rule, "from").entries()) {
    const source = isObject(from) && isObject(from.source) ? from.source : undefined;
    if (!source) continue;
    for (const [k, name] of Object.entries(customSourceFields))
      if (listOf(source, k).length > 0)
        return {
          field: child(`${child(at, "from")}[${j}].source`, k),
          message: `${name} is currently not supported with CUSTOM action`,
        };
  }
  for (const [j, when] of listOf(rule, "when").entries()) {
    const key = isObject(when) ? str(when, "key") : "";
    if (customKeys.includes(key) || key.startsWith("request.auth."))
      return {
        field: `${child(at, "when")}[${j}].key`,
        message: `${key} is currently not supported with CUSTOM action`,
      };
  }
  return undefined;
}

function source(from: unknown, at: string, i: number): P {
  if (!isObject(from)) return { field: at, message: `\`from\` must not be nil, found at rule ${i}` };
  const path = child(at, "source");
  if (!has(from, "source"))
    return { field: path, message: `\`from.source\` must not be nil, found at rule ${i}` };
  const s = from.source;
  if (!isObject(s)) return { field: path, message: `must be an object, got ${typeName(s)}` };
  const identities = ["principals", "notPrincipals", "namespaces", "notNamespaces"];
  const accounts = ["serviceAccounts", "notServiceAccounts"];
  if (identities.some((k) => listOf(s, k).length > 0) && accounts.some((k) => listOf(s, k).length > 0))
    return {
      field: path,
      message: `cannot set serviceAccounts with namespaces or principals, found at rule ${i}`,
    };
  return matchFields(s, path, sourceFields, `\`from.source\` must not be empty, found at rule ${i}`);
}

function operation(to: unknown, at: string, i: number): P {
  if (!isObject(to)) return { field: at, message: `\`to\` must not be nil, found at rule ${i}` };
  const path = child(at, "operation");
  if (!has(to, "operation"))
    return { field: path, message: `\`to.operation\` must not be nil, found at rule ${i}` };
  const o = to.operation;
  if (!isObject(o)) return { field: path, message: `must be an object, got ${typeName(o)}` };
  return matchFields(o, path, operationFields, `\`to.operation\` must not be empty, found at rule ${i}`);
}

function condition(c: unknown, at: string): P {
  if (!isObject(c)) return { field: at, message: "when field cannot be nil" };
  const keyPath = child(at, "key");
  if (has(c, "key") && typeof c.key !== "string")
    return { field: keyPath, message: `must be a string, got ${typeName(c.key)}` };
  const key = str(c, "key");
  if (key === "") return { field: keyPath, message: "`key` must not be empty" };
  for (const k of ["values", "notValues"]) {
    const p = has(c, k) ? stringList(c[k], child(at, k)) : undefined;
    if (p) return p;
  }
  const values = listOf(c, "values") as string[];
  const notValues = listOf(c, "notValues") as string[];
  if (values.length === 0 && notValues.length === 0)
    return { field: at, message: `at least one of \`values\` or \`notValues\` must be set for key ${key}` };
  for (const [k, list, what] of [
    ["values", values, "value"],
    ["notValues", notValues, "notValue"],
  ] as const) {
    const why = attributeProblem(key, list);
    if (why) {
      // An unknown key is wrong whatever its values: the key is named.
      const i = list.findIndex((v) => attributeProblem(key, [v]) !== undefined);
      const field = attributeProblem(key, []) ? keyPath : i < 0 ? child(at, k) : `${child(at, k)}[${i}]`;
      return { field, message: `invalid \`${what}\` for \`key\` ${key}: ${why}` };
    }
  }
  return undefined;
}

function rule(r: unknown, at: string, i: number, action: string): P {
  if (!isObject(r)) return { field: at, message: `\`rule\` must not be nil, found at rule ${i}` };
  for (const k of ["from", "to", "when"])
    if (has(r, k) && !Array.isArray(r[k]))
      return { field: child(at, k), message: `must be an array, got ${typeName(r[k])}` };
  if (listOf(r, "from").length > 512)
    return {
      field: child(at, "from"),
      message: `must have at most 512 items, got ${listOf(r, "from").length}`,
    };
  if (action === "CUSTOM") {
    const p = customRule(r, at);
    if (p) return p;
  }
  for (const [j, from] of listOf(r, "from").entries()) {
    const p = source(from, `${child(at, "from")}[${j}]`, i);
    if (p) return p;
  }
  for (const [j, to] of listOf(r, "to").entries()) {
    const p = operation(to, `${child(at, "to")}[${j}]`, i);
    if (p) return p;
  }
  for (const [j, c] of listOf(r, "when").entries()) {
    const p = condition(c, `${child(at, "when")}[${j}]`);
    if (p) return p;
  }
  return undefined;
}

const allowedTargets = [
  ["core", "Service"],
  ["networking.istio.io", "ServiceEntry"],
  ["gateway.networking.k8s.io", "Gateway"],
  ["gateway.networking.k8s.io", "GatewayClass"],
];
const allowedTargetNames =
  "[core/v1/Service networking.istio.io/v1/ServiceEntry gateway.networking.k8s.io/v1/Gateway gateway.networking.k8s.io/v1/GatewayClass]";

/** validatePolicyTargetReference, with the CRD's types. */
function targetRef(v: unknown, path: string): P {
  if (!isObject(v)) return { field: path, message: `must be an object, got ${typeName(v)}` };
  for (const k of ["group", "kind", "name", "namespace"])
    if (has(v, k) && typeof v[k] !== "string")
      return { field: child(path, k), message: `must be a string, got ${typeName(v[k])}` };
  if (str(v, "name") === "") return { field: child(path, "name"), message: "targetRef name must be set" };
  if (str(v, "namespace") !== "")
    return {
      field: child(path, "namespace"),
      message: "targetRef namespace must not be set; cross namespace referencing is not supported",
    };
  const group = str(v, "group") || "core";
  const kind = str(v, "kind");
  if (!allowedTargets.some(([g, k]) => g === group && k === kind))
    return {
      field: path,
      message: `targetRef must be to one of ${allowedTargetNames} but was ${str(v, "group")}/${kind}`,
    };
  return undefined;
}

/** Checks an AuthorizationPolicy object's metadata annotations and `spec`. */
export const authorizationPolicyCheck: Check = (obj, path) => {
  if (!isObject(obj)) return undefined;
  const specPath = child(path, "spec");
  // An absent spec is the empty spec: an ALLOW policy without rules (it allows nothing).
  const s = has(obj, "spec") ? obj.spec : {};
  if (!isObject(s)) return { field: specPath, message: `must be an object, got ${typeName(s)}` };
  const at = (k: string) => child(specPath, k);
  const meta = istioMetadata(obj, path);
  if (meta) return meta;
  if (has(s, "action")) {
    const p = oneOf(actions)(s.action, at("action"));
    if (p) return p;
  }
  const selectorKinds = [has(s, "selector"), has(s, "targetRef"), listOf(s, "targetRefs").length > 0];
  if (selectorKinds.filter(Boolean).length > 1)
    return { field: specPath, message: "only one of targetRefs or workloadSelector can be set" };
  const p =
    (has(s, "selector") ? workloadSelector(s.selector, at("selector")) : undefined) ??
    (has(s, "targetRef") ? targetRef(s.targetRef, at("targetRef")) : undefined) ??
    (has(s, "targetRefs") ? targetRefs(s.targetRefs, at("targetRefs")) : undefined) ??
    (has(s, "provider") && !isObject(s.provider)
      ? { field: at("provider"), message: `must be an object, got ${typeName(s.provider)}` }
      : undefined) ??
    (has(s, "rules") && !Array.isArray(s.rules)
      ? { field: at("rules"), message: `must be an array, got ${typeName(s.rules)}` }
      : undefined);
  if (p) return p;
  const action = str(s, "action") || "ALLOW";
  const rules = listOf(s, "rules");
  const meaningless = (a: string) =>
    `${a} action without \`rules\` is meaningless as it will never be triggered, add an empty rule \`{}\` if you want it be triggered for every request`;
  if (action === "CUSTOM") {
    if (rules.length === 0) return { field: at("rules"), message: meaningless("CUSTOM") };
    if (!isObject(s.provider) || str(s.provider, "name") === "")
      return { field: child(at("provider"), "name"), message: "`provider.name` must not be empty" };
  } else if (has(s, "provider"))
    return {
      field: at("provider"),
      message: `\`provider\` must not be with non CUSTOM action, found ${action}`,
    };
  if (action === "DENY" && rules.length === 0) return { field: at("rules"), message: meaningless("DENY") };
  if (rules.length > 512)
    return { field: at("rules"), message: `must have at most 512 items, got ${rules.length}` };
  for (const [i, r] of rules.entries()) {
    const q = rule(r, `${at("rules")}[${i}]`, i, action);
    if (q) return q;
  }
  return undefined;
};

function targetRefs(v: unknown, path: string): P {
  if (!Array.isArray(v)) return { field: path, message: `must be an array, got ${typeName(v)}` };
  if (v.length > 16) return { field: path, message: `must have at most 16 items, got ${v.length}` };
  for (const [i, t] of v.entries()) {
    const p = targetRef(t, `${path}[${i}]`);
    if (p) return p;
  }
  return undefined;
}
