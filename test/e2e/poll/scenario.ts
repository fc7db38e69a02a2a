/**
 * The mesh the Poll/Watch/REST suites run on, the same on Node and on workerd: the parity fixture,
 * then three changes. The versions after each change are golden, so both runtimes are held to
 * the same bytes (as test/fixtures/parity/versions.json holds them for the initial mesh).
 */
import events from "../../fixtures/parity/events.json";
import versions from "../../fixtures/parity/versions.json";

export { events };

/** The served type URLs (lib/resources/types.ts's, repeated so fixtures type-check against literal keys). */
export const TypeUrl = {
  cluster: "type.googleapis.com/envoy.config.cluster.v3.Cluster",
  endpoint: "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment",
  listener: "type.googleapis.com/envoy.config.listener.v3.Listener",
  route: "type.googleapis.com/envoy.config.route.v3.RouteConfiguration",
} as const;

/** Resource names the suites ask for; `missing` never exists. */
export const names = {
  reviews: "outbound|9080||reviews.default.svc.cluster.local",
  reviewsHttp: "outbound|8080||reviews.default.svc.cluster.local",
  ratings: "outbound|50051||ratings.shop.svc.cluster.local",
  ratingsListener: "ratings.shop.svc.cluster.local:50051",
  details: "outbound|9091||details.default.svc.cluster.local",
  missing: "outbound|1||missing.default.svc.cluster.local",
} as const;

/** One of the served type URLs. */
export type ServedType = (typeof TypeUrl)[keyof typeof TypeUrl];

/** Published versions of the parity mesh: type URL ─▶ name ─▶ version. */
export const initial: Record<ServedType, Record<string, string>> = versions;

/** Versions the changes below publish (the same on every runtime: content hashes). */
export const golden = {
  /** The ratings ClusterLoadAssignment once its second endpoint is not ready. */
  ratingsAfterNotReady: "a3d16a5a29e53abd",
  /** The new details Service's cluster. */
  detailsCluster: "054ea034ecfdc456",
};

function fixture(kind: string, name: string) {
  const found = events.find((e) => e.object.kind === kind && e.object.metadata.name === name);
  if (!found) throw new Error(`${kind} ${name} is not in the parity fixture`);
  return structuredClone(found.object) as Record<string, unknown> & {
    metadata: { resourceVersion: string };
  };
}

/** Change 1: one ratings endpoint is no longer ready, so only the ratings ClusterLoadAssignment changes. */
export function ratingsEndpointNotReady() {
  const slice = fixture("EndpointSlice", "ratings-q9wz5") as ReturnType<typeof fixture> & {
    endpoints: { conditions: Record<string, boolean> }[];
  };
  slice.metadata.resourceVersion = "60001";
  slice.endpoints[1]!.conditions = { ready: false, serving: false, terminating: false };
  return [{ type: "MODIFIED", object: slice }];
}

/** Change 2: a new Service with no endpoints (nothing an EDS subscription to reviews/ratings cares about). */
export function detailsAdded() {
  const object = {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "details", namespace: "default", uid: "d-1", resourceVersion: "60002" },
    spec: {
      clusterIP: "10.96.7.7",
      ports: [{ name: "grpc", port: 9091, protocol: "TCP" }],
      type: "ClusterIP",
    },
  };
  return [{ type: "ADDED", object }];
}

/** Change 3: the ratings Service is deleted, and everything generated for it goes. */
export function ratingsDeleted() {
  const svc = fixture("Service", "ratings");
  svc.metadata.resourceVersion = "60003";
  return [{ type: "DELETED", object: svc }];
}
