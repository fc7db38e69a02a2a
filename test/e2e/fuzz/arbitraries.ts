/**
 * Generators for the ingest fuzz suite: arbitrary JSON, and valid Kubernetes objects (the API
 * server fixtures) mutated at one or more paths: wrong types, missing fields, bad IPs, huge and
 * unicode strings, "/" in names and labels, duplicates and out-of-order resourceVersions.
 */
import fc from "fast-check";
import { loadKubeFixture } from "../../fixtures/kube/load.ts";

type Json = unknown;

const fixtureNames = [
  "service-clusterip.json",
  "service-headless.json",
  "service-dual-stack.json",
  "service-externalname.json",
  "endpointslice-ipv4.json",
  "endpointslice-ipv6.json",
  "endpointslice-fqdn.json",
  "endpoints-v1.json",
  "pod.json",
  "node.json",
  "namespace.json",
] as const;

/** The fixtures, loaded once; every generated object is a deep copy. */
export const fixtures: Record<string, Json> = Object.fromEntries(
  fixtureNames.map((n) => [n, loadKubeFixture<Json>(n)]),
);

/** Values that break objects in the ways observed in the wild or by an attacker. */
const nasty: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom(
    "999.999.1.1",
    "not-an-ip",
    "10.0.0.0/8",
    "::1",
    "fe80::1%eth0",
    "a/b",
    "../../xds",
    "",
    " ",
    "UPPER",
    "-leading",
    "dots.in.name",
    "ü\u{1f600}\u0000\u2028",
    "\ud800",
    "x".repeat(70_000),
    -1,
    0,
    70_000,
    1.5,
    1e308,
    true,
    null,
    [],
    {},
    ["10.0.0.1", 7],
  ),
  fc.string({ maxLength: 40, unit: "binary" }),
  fc.jsonValue({ maxDepth: 2 }),
);

/** Every path to a value inside `value` (object keys and array indexes), root excluded. */
function pathsOf(value: Json, at: (string | number)[] = [], out: (string | number)[][] = []) {
  if (Array.isArray(value))
    value.forEach((v, i) => {
      out.push([...at, i]);
      pathsOf(v, [...at, i], out);
    });
  else if (value !== null && typeof value === "object")
    for (const [k, v] of Object.entries(value)) {
      out.push([...at, k]);
      pathsOf(v, [...at, k], out);
    }
  return out;
}

/** One change at a path: drop it, or replace it. Names and labels get "/" and friends more often. */
export type Mutation = { pick: number; action: "delete" | "replace"; value: Json };

const mutationArb: fc.Arbitrary<Mutation> = fc.record({
  pick: fc.nat(),
  action: fc.constantFrom("delete" as const, "replace" as const, "replace" as const),
  value: nasty,
});

/** Applies mutations to a deep copy of `object`. */
export function mutate(object: Json, mutations: readonly Mutation[]): Json {
  const copy = structuredClone(object) as Record<string, unknown>;
  for (const m of mutations) {
    const paths = pathsOf(copy);
    if (paths.length === 0) return copy;
    const path = paths[m.pick % paths.length] as (string | number)[];
    let parent: Record<string | number, unknown> = copy;
    for (const step of path.slice(0, -1)) parent = parent[step] as Record<string | number, unknown>;
    const last = path[path.length - 1] as string | number;
    if (m.action === "delete") {
      if (Array.isArray(parent)) parent.splice(last as number, 1);
      else delete parent[last];
    } else parent[last] = structuredClone(m.value);
  }
  return copy;
}

/** A fixture, left valid (with a fresh resourceVersion) or mutated at 1-3 paths. */
export const kubeObject: fc.Arbitrary<Json> = fc
  .record({
    name: fc.constantFrom(...fixtureNames),
    mutations: fc.oneof(
      { weight: 1, arbitrary: fc.constant([] as Mutation[]) },
      { weight: 2, arbitrary: fc.array(mutationArb, { minLength: 1, maxLength: 3 }) },
    ),
    rv: fc.integer({ min: 1, max: 99_999 }),
    rename: fc.oneof(
      { weight: 4, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.constantFrom("a/b", "svc.with.dots", "ok-name", "x".repeat(300), "ü") },
    ),
  })
  .map(({ name, mutations, rv, rename }) => {
    const base = structuredClone(fixtures[name]) as { metadata: Record<string, unknown> };
    base.metadata.resourceVersion = String(rv);
    if (rename !== null) base.metadata.name = rename;
    return mutate(base, mutations);
  });

export const eventType = fc.constantFrom("ADDED", "MODIFIED", "DELETED", "BOOKMARK", "UNKNOWN", 7);

/** One watch event: usually well-formed around a (maybe mutated) object, sometimes anything. */
export const watchEvent: fc.Arbitrary<Json> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ type: eventType, object: kubeObject }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

/** A batch: events, duplicates of one of them (replays, reordering) included. */
export const batch: fc.Arbitrary<Json[]> = fc
  .tuple(fc.array(watchEvent, { minLength: 1, maxLength: 8 }), fc.nat(), fc.boolean())
  .map(([events, i, dup]) => (dup ? [...events, events[i % events.length]] : events));

/** A resync list of one kind, its items mutated fixtures (any kind: wrong ones must be refused). */
export const resyncCall = fc.record({
  kind: fc.constantFrom("Service", "EndpointSlice", "Endpoints", "Pod", "Node", "Namespace", "Widget"),
  listRv: fc.oneof(fc.integer({ min: 1, max: 99_999 }).map(String), fc.constant(""), fc.constant("x")),
  items: fc.array(kubeObject, { maxLength: 6 }),
  bare: fc.boolean(),
});

/** An AdmissionReview around a (maybe mutated) object; sometimes the review itself is broken. */
export const admissionReview: fc.Arbitrary<Json> = fc
  .record({
    operation: fc.constantFrom("CREATE", "UPDATE", "DELETE", "CONNECT", "PATCH"),
    object: kubeObject,
    dryRun: fc.boolean(),
    mutations: fc.array(mutationArb, { maxLength: 1 }),
  })
  .map(({ operation, object, dryRun, mutations }) =>
    mutate(
      {
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        request: { uid: "u-1", operation, namespace: "bookinfo", dryRun, object, oldObject: object },
      },
      mutations,
    ),
  );

/** Valid fixtures only, any event type, random resourceVersions: replays, reorderings, deletes of unknown objects. */
export const validBatch: fc.Arbitrary<Json[]> = fc.array(
  fc
    .record({
      name: fc.constantFrom(...fixtureNames),
      type: fc.constantFrom("ADDED", "MODIFIED", "DELETED"),
      rv: fc.integer({ min: 1, max: 200 }),
    })
    .map(({ name, type, rv }) => {
      const object = structuredClone(fixtures[name]) as { metadata: Record<string, unknown> };
      object.metadata.resourceVersion = String(rv);
      return { type, object };
    }),
  { minLength: 1, maxLength: 12 },
);
