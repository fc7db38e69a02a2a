/**
 * What HTTPRoute and GRPCRoute share in the Gateway API's standard-channel CRDs: parentRefs (and
 * their sectionName rules), hostnames, backendRefs (a Service needs a port), the header modifier,
 * mirror and extensionRef filters with the rules tying a filter's type to its field, header
 * matches, and the cap on matches across a route's rules. Messages of CEL rules are the CRD's.
 */
import { all, type Check } from "../check.ts";
import {
  enumOf,
  get,
  group,
  has,
  headerName,
  hostname,
  int,
  items,
  kind,
  list,
  listRules,
  namespace,
  obj,
  objectName,
  portNumber,
  type Rule,
  sectionName,
  text,
} from "./validate-schema.ts";

const gatewayGroup = "gateway.networking.k8s.io";

/** Two parentRefs name the same parent: group, kind, name and namespace (unset and "" alike), with defaults. */
function sameParent(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const ns = (p: Record<string, unknown>) => (get(p, "namespace", "") as string) || "";
  return (
    get(a, "group", gatewayGroup) === get(b, "group", gatewayGroup) &&
    get(a, "kind", "Gateway") === get(b, "kind", "Gateway") &&
    a.name === b.name &&
    ns(a) === ns(b)
  );
}

type Ref = Record<string, unknown>;
const section = (p: Ref) => (get(p, "sectionName", "") as string) || "";
const port = (p: Ref) => (get(p, "port", 0) as number) || 0;

/**
 * The parentRefs rules of one channel, `key` naming what tells two references to one parent
 * apart (the standard channel: sectionName; the experimental channel: sectionName and port).
 * Gives the message of the first rule that fails, or undefined.
 */
function parentRefProblem(refs: Ref[], key: (p: Ref) => unknown[], what: string): string | undefined {
  const unset = (p: Ref) => key(p).map((k) => k === "" || k === 0);
  const same = (a: unknown[], b: unknown[]) => a.every((x, i) => x === b[i]);
  if (!refs.every((a) => refs.every((b) => !sameParent(a, b) || same(unset(a), unset(b)))))
    return `${what} must be specified when parentRefs includes 2 or more references to the same parent`;
  if (!refs.every((a) => refs.filter((b) => sameParent(a, b) && same(key(a), key(b))).length === 1))
    return `${what} must be unique when parentRefs includes 2 or more references to the same parent`;
  return undefined;
}

/**
 * The CEL rules of `parentRefs`: references to one parent must be told apart. Accepted when either
 * released channel accepts them (the standard CRD by sectionName; the experimental one, which mesh
 * routes often use, by sectionName and port); refused with the standard CRD's message.
 */
const parentRefRules: Check = (v, path) => {
  if (!Array.isArray(v)) return undefined;
  const refs = v as Ref[];
  const standard = parentRefProblem(refs, (p) => [section(p)], "sectionName");
  if (!standard || !parentRefProblem(refs, (p) => [section(p), port(p)], "sectionName or port"))
    return undefined;
  return { field: path, message: standard };
};

/** ParentReferences (up to 32), then the list's rules. */
export const parentRefs: Check = all(
  list(obj({ group, kind, namespace, name: objectName, sectionName, port: portNumber }, ["name"]), {
    max: 32,
  }),
  parentRefRules,
);

/** Route hostnames: up to 16, each a Hostname. */
export const hostnames: Check = list(hostname, { max: 16 });

/** A Service backend (group "" and kind Service, the defaults) must name its port. */
const servicePort: Rule = [
  (b) =>
    !((get(b, "group", "") as string) === "" && get(b, "kind", "Service") === "Service") || has(b, "port"),
  "Must have port for Service reference",
];

/** BackendObjectReference fields. */
export const backendRefFields: Record<string, Check> = {
  group,
  kind,
  name: objectName,
  namespace,
  port: portNumber,
};

/** A BackendObjectReference (a mirror's backend). */
export const backendObjectRef: Check = obj(backendRefFields, ["name"], [servicePort]);

/** A BackendRef of a rule: a BackendObjectReference with a weight and the route's own filters. */
export const backendRef = (filters: Check): Check =>
  obj({ ...backendRefFields, weight: int(0, 1000000), filters }, ["name"], [servicePort]);

const headerValue = text({ min: 1, max: 4096 });
const headerList = list(obj({ name: headerName, value: headerValue }, ["name", "value"]), {
  max: 16,
  key: "name",
});

/** HTTPHeaderFilter: set, add (unique names), remove (a set). */
export const headerModifier: Check = obj({
  set: headerList,
  add: headerList,
  remove: list(text(), { max: 16, set: true }),
});

/** HTTPRequestMirrorFilter: a backend, and a percent or a fraction, not both. */
export const requestMirror: Check = obj(
  {
    backendRef: backendObjectRef,
    percent: int(0, 100),
    fraction: obj(
      { numerator: int(0), denominator: int(1) },
      ["numerator"],
      [
        [
          (f) => (f.numerator as number) <= (get(f, "denominator", 100) as number),
          "numerator must be less than or equal to denominator",
        ],
      ],
    ),
  },
  ["backendRef"],
  [
    [
      (m) => !(has(m, "percent") && has(m, "fraction")),
      "Only one of percent or fraction may be specified in HTTPRequestMirrorFilter",
    ],
  ],
);

/** LocalObjectReference (extensionRef). */
export const extensionRef: Check = obj({ group, kind, name: objectName }, ["group", "kind", "name"]);

/**
 * A filter: its `type` of `types`, its fields' checks, and for each (type, field) pair the two
 * rules that the field is set exactly when the filter is of that type.
 */
export function filter(
  types: readonly string[],
  fields: Record<string, [type: string, check: Check]>,
): Check {
  const rules: Rule[] = [];
  for (const [field, [type]] of Object.entries(fields))
    rules.push(
      [
        (f) => !(has(f, field) && f.type !== type),
        `filter.${field} must be nil if the filter.type is not ${type}`,
      ],
      [
        (f) => !(!has(f, field) && f.type === type),
        `filter.${field} must be specified for ${type} filter.type`,
      ],
    );
  const checks = Object.fromEntries(Object.entries(fields).map(([k, [, c]]) => [k, c]));
  return obj({ type: enumOf(types), ...checks }, ["type"], rules);
}

/** A filter list: up to 16, and each of `once` at most once. */
export function filterList(
  item: Check,
  once: readonly string[],
  extra: [(fs: unknown[]) => boolean, string][] = [],
): Check {
  const count = (fs: unknown[], t: string) => fs.filter((f) => get(f, "type") === t).length;
  return (v, path) =>
    list(item, { max: 16 })(v, path) ??
    listRules([
      ...extra,
      ...once.map((t): [(fs: unknown[]) => boolean, string] => [
        (fs) => count(fs, t) <= 1,
        `${t} filter cannot be repeated`,
      ]),
    ])(v, path);
}

/** A header match: an exact or regex value under a header name; names unique in the list. */
export const headerMatches: Check = list(
  obj({ name: headerName, value: headerValue, type: enumOf(["Exact", "RegularExpression"]) }, [
    "name",
    "value",
  ]),
  { max: 16, key: "name" },
);

/** A rule's name (a section name). */
export const ruleName = sectionName;

/**
 * The rules list's cap on matches across rules (16 rules of up to 64 matches); a rule without
 * matches counts `unset` (HTTPRoute defaults them to one PathPrefix match, GRPCRoute to none).
 */
export const totalMatches = (unset: number): Check =>
  listRules([
    [
      (rules) =>
        rules.reduce((n: number, r) => n + (has(r, "matches") ? items(r, "matches").length : unset), 0) <=
        128,
      "While 16 rules and 64 matches per rule are allowed, the total number of matches across all rules in a route must be less than 128",
    ],
  ]);
