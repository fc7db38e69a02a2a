/**
 * Kubernetes label selectors and Istio's meshConfig.discoverySelectors
 * (istio pilot/pkg/serviceregistry/kube/controller/filter/discoverynamespaces.go; the matching
 * rules are apimachinery's LabelSelectorAsSelector).
 */
import { compareStrings, sortedRecord } from "./canonical.ts";
import type { LabelSelector } from "./records.ts";

/** One matchExpressions entry. */
export type LabelSelectorRequirement = NonNullable<LabelSelector["matchExpressions"]>[number];

/** The outcome of parseDiscoverySelectors: the selectors in canonical form, or what is wrong and where. */
export type ParseSelectorsResult = { ok: true; selectors: LabelSelector[] } | { ok: false; error: string };

const OPERATORS: readonly LabelSelectorRequirement["operator"][] = ["In", "NotIn", "Exists", "DoesNotExist"];

/**
 * True when the labels satisfy every matchLabels entry and every matchExpressions requirement;
 * an empty selector matches everything. In: the key is present with one of the values. NotIn:
 * the key is absent or has none of them. Exists / DoesNotExist: the key is present / absent.
 * An unknown operator matches nothing.
 */
export function matchesSelector(labels: Readonly<Record<string, string>>, selector: LabelSelector): boolean {
  const has = (key: string) => Object.hasOwn(labels, key);
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (!has(key) || labels[key] !== value) return false;
  }
  return (selector.matchExpressions ?? []).every((r) => {
    const values = r.values ?? [];
    switch (r.operator) {
      case "In":
        return has(r.key) && values.includes(labels[r.key]!);
      case "NotIn":
        return !has(r.key) || !values.includes(labels[r.key]!);
      case "Exists":
        return has(r.key);
      case "DoesNotExist":
        return !has(r.key);
      default:
        return false;
    }
  });
}

/**
 * Istio's discovery namespace filter: no selectors ▶ every namespace is selected; otherwise a
 * namespace is selected when any selector matches its labels.
 */
export function namespaceSelected(
  labels: Readonly<Record<string, string>>,
  selectors: readonly LabelSelector[],
): boolean {
  return selectors.length === 0 || selectors.some((s) => matchesSelector(labels, s));
}

/**
 * Parses meshConfig.discoverySelectors from JSON (a list of LabelSelectors; `null` = none) and
 * validates it as apimachinery would: only matchLabels and matchExpressions, label keys and values
 * well formed, operators In / NotIn / Exists / DoesNotExist, In and NotIn with at least one value,
 * Exists and DoesNotExist with none. The error names the field, e.g.
 * `discoverySelectors[1].matchExpressions[0].operator: ...`. Selectors come back canonical:
 * keys and values sorted, empty parts left out.
 */
export function parseDiscoverySelectors(json: string): ParseSelectorsResult {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (e) {
    return { ok: false, error: `discoverySelectors: not valid JSON: ${(e as Error).message}` };
  }
  return validateDiscoverySelectors(value);
}

/** parseDiscoverySelectors for an already decoded value (e.g. a field of a larger document). */
export function validateDiscoverySelectors(value: unknown): ParseSelectorsResult {
  try {
    if (value === null) return { ok: true, selectors: [] };
    if (!Array.isArray(value)) throw new Invalid("discoverySelectors", "must be a list of label selectors");
    return { ok: true, selectors: value.map((s, i) => selector(s, `discoverySelectors[${i}]`)) };
  } catch (e) {
    if (e instanceof Invalid) return { ok: false, error: e.message };
    throw e;
  }
}

class Invalid extends Error {
  constructor(path: string, problem: string) {
    super(`${path}: ${problem}`);
  }
}

function selector(value: unknown, path: string): LabelSelector {
  const obj = object(value, path, "must be a label selector object");
  for (const key of Object.keys(obj)) {
    if (key !== "matchLabels" && key !== "matchExpressions") {
      throw new Invalid(
        `${path}.${key}`,
        "unknown field (a label selector has matchLabels and matchExpressions)",
      );
    }
  }
  const out: LabelSelector = {};
  if (obj.matchLabels !== undefined && obj.matchLabels !== null) {
    const labels = object(
      obj.matchLabels,
      `${path}.matchLabels`,
      "must be an object of label keys to values",
    );
    for (const [key, v] of Object.entries(labels)) {
      labelKey(key, `${path}.matchLabels`);
      labelValue(v, `${path}.matchLabels[${JSON.stringify(key)}]`);
    }
    if (Object.keys(labels).length > 0) out.matchLabels = sortedRecord(labels as Record<string, string>);
  }
  if (obj.matchExpressions !== undefined && obj.matchExpressions !== null) {
    if (!Array.isArray(obj.matchExpressions)) {
      throw new Invalid(`${path}.matchExpressions`, "must be a list of requirements");
    }
    const exprs = obj.matchExpressions.map((r, i) => requirement(r, `${path}.matchExpressions[${i}]`));
    if (exprs.length > 0) out.matchExpressions = exprs;
  }
  return out;
}

function requirement(value: unknown, path: string): LabelSelectorRequirement {
  const obj = object(value, path, "must be an object with key, operator and values");
  for (const key of Object.keys(obj)) {
    if (key !== "key" && key !== "operator" && key !== "values") {
      throw new Invalid(`${path}.${key}`, "unknown field (a requirement has key, operator and values)");
    }
  }
  const key = labelKey(obj.key, `${path}.key`);
  const operator = obj.operator;
  if (typeof operator !== "string" || !OPERATORS.includes(operator as LabelSelectorRequirement["operator"])) {
    throw new Invalid(
      `${path}.operator`,
      `${JSON.stringify(operator)} is not one of ${OPERATORS.join(", ")}`,
    );
  }
  const op = operator as LabelSelectorRequirement["operator"];
  const raw = obj.values ?? [];
  if (!Array.isArray(raw)) throw new Invalid(`${path}.values`, "must be a list of strings");
  const values = raw.map((v, i) => labelValue(v, `${path}.values[${i}]`));
  if ((op === "In" || op === "NotIn") && values.length === 0) {
    throw new Invalid(`${path}.values`, `must be non-empty when operator is ${op}`);
  }
  if ((op === "Exists" || op === "DoesNotExist") && values.length > 0) {
    throw new Invalid(`${path}.values`, `must be empty when operator is ${op}`);
  }
  return values.length > 0
    ? { key, operator: op, values: [...new Set(values)].sort(compareStrings) }
    : { key, operator: op };
}

function object(value: unknown, path: string, problem: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Invalid(path, problem);
  return value as Record<string, unknown>;
}

// apimachinery validation: a qualified name (optional DNS-subdomain prefix and "/", then a name of
// at most 63 characters) for keys; an empty string or such a name for values.
const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function labelKey(value: unknown, path: string): string {
  if (typeof value !== "string") throw new Invalid(path, "label key must be a string");
  const slash = value.lastIndexOf("/");
  const prefix = slash >= 0 ? value.slice(0, slash) : undefined;
  const name = slash >= 0 ? value.slice(slash + 1) : value;
  const prefixOk = prefix === undefined || (prefix.length <= 253 && SUBDOMAIN.test(prefix));
  if (!prefixOk || name.length > 63 || !NAME.test(name) || value.indexOf("/") !== slash) {
    throw new Invalid(
      path,
      `${JSON.stringify(value)} is not a valid label key ([prefix/]name: name at most 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric; prefix a DNS subdomain)`,
    );
  }
  return value;
}

function labelValue(value: unknown, path: string): string {
  if (typeof value !== "string") throw new Invalid(path, "label value must be a string");
  if (value !== "" && (value.length > 63 || !NAME.test(value))) {
    throw new Invalid(
      path,
      `${JSON.stringify(value)} is not a valid label value (at most 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric)`,
    );
  }
  return value;
}
