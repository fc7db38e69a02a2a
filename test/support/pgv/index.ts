/**
 * protoc-gen-validate for tests: checks a message against the `(validate.rules)` annotations read
 * from its generated descriptors (lib/gen), every rule kind of validate.proto, as Envoy does before
 * it accepts a resource. Violations are `path: rule (value)` lines; none means Envoy's PGV accepts it.
 * `checkResource`/`assertValidResources` decode xDS resources by type URL and throw on a violation.
 */
import { type DescMessage, fromBinary, type Message, type Registry } from "@bufbuild/protobuf";
import { reflect } from "@bufbuild/protobuf/reflect";
import { envoyTypes } from "./registry.ts";
import { sinkInto } from "./shared.ts";
import { walkMessage } from "./walk.ts";

export { envoyTypes } from "./registry.ts";

/** Options of a check: the registry Any is unpacked with (every generated Envoy type), the clock. */
export interface PgvOptions {
  registry?: Registry;
  /** Milliseconds since the epoch, for timestamp lt_now/gt_now/within (default: Date.now()). */
  now?: number;
}

/** Every PGV violation in `msg` (of `schema`), as `path: rule (value)` lines. */
export function pgvViolations(schema: DescMessage, msg: Message, options: PgvOptions = {}): string[] {
  const out: string[] = [];
  walkMessage(reflect(schema, msg), schema.typeName, {
    registry: options.registry ?? envoyTypes().registry,
    nowNanos: BigInt(options.now ?? Date.now()) * 1_000_000n,
    sink: sinkInto(out),
  });
  return out;
}

/** The message a type URL names, from the registry of generated Envoy types. */
export function schemaOf(typeUrl: string): DescMessage {
  const name = typeUrl.slice(typeUrl.lastIndexOf("/") + 1);
  const d = envoyTypes().registry.getMessage(name);
  if (!d) throw new Error(`PGV: no generated Envoy message for type URL ${typeUrl}`);
  return d;
}

/** One encoded resource decoded by its type URL, with its violations (`name` prefixes each line). */
export function checkResource(
  typeUrl: string,
  bytes: Uint8Array,
  name = "",
): { message: Message; violations: string[] } {
  const schema = schemaOf(typeUrl);
  const message = fromBinary(schema, bytes);
  const violations = pgvViolations(schema, message).map((v) => (name ? `${name}: ${v}` : v));
  return { message, violations };
}

/** Throws, listing every violation, unless every resource passes Envoy's PGV rules. */
export function assertValidResources(
  resources: Iterable<{ typeUrl: string; value: Uint8Array; name?: string }>,
): void {
  const all: string[] = [];
  for (const r of resources) all.push(...checkResource(r.typeUrl, r.value, r.name).violations);
  if (all.length > 0)
    throw new Error(
      `${all.length} protoc-gen-validate violation(s) Envoy would reject:\n${all.slice(0, 50).join("\n")}`,
    );
}
