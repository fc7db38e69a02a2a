/** What the PGV rule checks share: proto2 presence of a rule, value display, the violation sink. */

/**
 * A proto2 rule field as set (validate.proto is proto2: protobuf-es keeps unset fields' defaults on
 * the prototype, so presence is an own property), as protoc-gen-validate's `{{ if $r.Lt }}` tests.
 */
export function own<T extends object, K extends keyof T>(o: T | undefined, k: K): T[K] | undefined {
  return o !== undefined && Object.hasOwn(o, k) ? o[k] : undefined;
}

/** A value as a violation line shows it: strings quoted and cut at 80 characters, bytes in hex. */
export function show(v: unknown): string {
  if (typeof v === "string") {
    const q = JSON.stringify(v);
    return q.length > 80 ? `${q.slice(0, 77)}..."` : q;
  }
  if (v instanceof Uint8Array) return `0x${[...v].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
  if (Array.isArray(v)) return `[${v.map(show).join(", ")}]`;
  return String(v);
}

/** Text shown as is (a value already formatted, e.g. a duration as 1.5s). */
export const raw = (text: string): unknown => ({ toString: () => text });

/** A field path, built as text only when a violation names it (most paths are never printed). */
export type PathLike = string | { toString(): string };

class SubPath {
  constructor(
    readonly parent: PathLike,
    readonly seg: string,
  ) {}
  toString(): string {
    return `${this.parent}${this.seg}`;
  }
}

/** `parent` + `seg`, joined when printed. */
export function subPath(parent: PathLike, seg: string): PathLike {
  return new SubPath(parent, seg);
}

/** Collects `path: rule (value)` lines. */
export type Sink = (path: PathLike, rule: string, value: unknown) => void;

/** A sink appending to `out`. */
export function sinkInto(out: string[]): Sink {
  return (path, rule, value) => out.push(`${path}: ${rule} (${show(value)})`);
}
