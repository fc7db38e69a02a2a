/** Small structural checks that report the first problem with its path. Pure, no dependencies. */

/** A problem at a path relative to the value checked. */
export interface Problem {
  field: string;
  message: string;
}

export type Check = (value: unknown, path: string) => Problem | undefined;

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Describes a JSON value's type for messages. */
export function typeName(v: unknown): string {
  return v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
}

export const object =
  (fields: Record<string, Check>, required: readonly string[] = []): Check =>
  (value, path) => {
    if (!isObject(value)) return { field: path, message: `must be an object, got ${typeName(value)}` };
    for (const name of required) {
      // The API server reads null as unset: a required field that is null is missing.
      if (value[name] === undefined || value[name] === null)
        return { field: join(path, name), message: "is required" };
    }
    for (const [name, check] of Object.entries(fields)) {
      if (value[name] === undefined || value[name] === null) continue;
      const p = check(value[name], join(path, name));
      if (p) return p;
    }
    return undefined;
  };

export const arrayOf =
  (item: Check): Check =>
  (value, path) => {
    if (!Array.isArray(value)) return { field: path, message: `must be an array, got ${typeName(value)}` };
    for (let i = 0; i < value.length; i++) {
      const p = item(value[i], `${path}[${i}]`);
      if (p) return p;
    }
    return undefined;
  };

export const string: Check = (v, path) =>
  typeof v === "string" ? undefined : { field: path, message: `must be a string, got ${typeName(v)}` };

export const boolean: Check = (v, path) =>
  typeof v === "boolean" ? undefined : { field: path, message: `must be a boolean, got ${typeName(v)}` };

export const port: Check = (v, path) =>
  Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 65535
    ? undefined
    : { field: path, message: `must be a port number 1-65535, got ${JSON.stringify(v)}` };

/** A Kubernetes IntOrString (targetPort). */
export const intOrString: Check = (v, path) =>
  typeof v === "string" || Number.isInteger(v)
    ? undefined
    : { field: path, message: `must be an integer or a string, got ${typeName(v)}` };

export const stringMap: Check = (v, path) => {
  if (!isObject(v)) return { field: path, message: `must be an object of strings, got ${typeName(v)}` };
  for (const [k, x] of Object.entries(v)) {
    if (typeof x !== "string")
      return { field: join(path, k), message: `must be a string, got ${typeName(x)}` };
  }
  return undefined;
};

/** A DNS-1123 name as Kubernetes requires for namespaces, services and slices (no "/"). */
export const dnsName: Check = (v, path) => {
  if (typeof v !== "string" || v === "") return { field: path, message: "must be a non-empty string" };
  return /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(v)
    ? undefined
    : { field: path, message: `${JSON.stringify(v)} is not a valid Kubernetes name (lower-case DNS-1123)` };
};

function join(path: string, name: string): string {
  return path ? `${path}.${name}` : name;
}
