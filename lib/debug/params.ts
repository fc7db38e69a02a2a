/**
 * Query parameters of the /debug/* endpoints, validated before anything is read: an unknown
 * parameter, a bad number or an oversized value is refused with a message that names it (the
 * route answers 400), so a typo never silently returns everything.
 */

/** A parsed query, or the reason it was refused. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** How one parameter is read. */
export type ParamSpec =
  | { kind: "limit"; default: number; max: number }
  | { kind: "string"; maxChars: number }
  | { kind: "int"; min: number }
  | { kind: "flag" };

/** The longest value any debug parameter takes (a node id is at most 1024 characters). */
export const maxParamChars = 2048;

/**
 * Reads `query` (name ─▶ every value given) by `specs`: each name once at most, every value
 * within its bounds; `pretty` is always allowed (istiod's own flag). Absent strings and ints are
 * undefined; limits default; flags are true when present.
 */
export function parseParams<S extends Record<string, ParamSpec>>(
  query: Readonly<Record<string, readonly string[]>>,
  specs: S,
): Parsed<{
  [K in keyof S]: S[K] extends { kind: "limit" }
    ? number
    : S[K] extends { kind: "flag" }
      ? boolean
      : S[K] extends { kind: "int" }
        ? number | undefined
        : string | undefined;
}> {
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(query)) {
    if (name === "pretty") continue;
    if (!Object.hasOwn(specs, name)) {
      const known = ["pretty", ...Object.keys(specs)].join(", ");
      return {
        ok: false,
        error: `unknown query parameter ${JSON.stringify(name.slice(0, 64))}; this path takes ${known}`,
      };
    }
  }
  for (const [name, spec] of Object.entries(specs)) {
    const values = query[name] ?? [];
    if (values.length > 1)
      return { ok: false, error: `query parameter ${name} is given ${values.length} times; give it once` };
    const raw = values[0];
    if (spec.kind === "flag") {
      out[name] = raw !== undefined;
      continue;
    }
    if (raw === undefined) {
      out[name] = spec.kind === "limit" ? spec.default : undefined;
      continue;
    }
    if (spec.kind === "string") {
      if (raw === "") return { ok: false, error: `query parameter ${name} is empty` };
      if (raw.length > spec.maxChars)
        return {
          ok: false,
          error: `query parameter ${name} is ${raw.length} characters; at most ${spec.maxChars} are accepted`,
        };
      out[name] = raw;
      continue;
    }
    if (!/^[0-9]{1,15}$/.test(raw))
      return {
        ok: false,
        error: `query parameter ${name} must be a whole number, got ${JSON.stringify(raw.slice(0, 32))}`,
      };
    const n = Number(raw);
    if (spec.kind === "limit") {
      if (n < 1 || n > spec.max)
        return { ok: false, error: `query parameter ${name} must be 1 to ${spec.max}, got ${n}` };
    } else if (n < spec.min) {
      return { ok: false, error: `query parameter ${name} must be at least ${spec.min}, got ${n}` };
    }
    out[name] = n;
  }
  // biome-ignore lint/suspicious/noExplicitAny: the mapped type is built field by field above
  return { ok: true, value: out as any };
}
