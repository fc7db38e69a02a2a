/**
 * A bookinfo-like mesh as the relay posts it (Services, EndpointSlices, Pods), the productpage
 * sidecar's node as istio-proxy sends it, and readers of what a raw ADS client received.
 */
import { fromBinary } from "@bufbuild/protobuf";
import {
  type Cluster,
  Cluster_DiscoveryType,
  ClusterSchema,
} from "../../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import { ClusterLoadAssignmentSchema } from "../../../lib/gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { type Listener, ListenerSchema } from "../../../lib/gen/envoy/config/listener/v3/listener_pb.ts";
import {
  type RouteConfiguration,
  RouteConfigurationSchema,
} from "../../../lib/gen/envoy/config/route/v3/route_pb.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { rdsOf } from "../../unit/xds/sidecar/inspect.ts";
import { endpointSlice, event, podName, service, versionedPod } from "../support/kube.ts";

/** The productpage pod's IP: its sidecar's node id names it. */
export const productpageIp = "10.1.0.10";

/** The bookinfo services: name, cluster IP, and their pods as [ip, version]. */
const apps: [string, string, [string, string][]][] = [
  ["productpage", "10.96.0.10", [[productpageIp, "v1"]]],
  ["details", "10.96.0.11", [["10.1.0.11", "v1"]]],
  [
    "reviews",
    "10.96.0.12",
    [
      ["10.1.0.12", "v1"],
      ["10.1.0.13", "v2"],
    ],
  ],
  ["ratings", "10.96.0.14", [["10.1.0.14", "v1"]]],
];

/** Every object of the mesh as ADDED watch events (HTTP port `http` 9080 each, as bookinfo names it). */
export function bookinfoEvents(): unknown[] {
  const out: unknown[] = [];
  for (const [name, vip, pods] of apps) {
    const s = service(name, "default", [{ name: "http", port: 9080 }]);
    out.push(event("ADDED", { ...s, spec: { ...s.spec, clusterIP: vip, clusterIPs: [vip] } }));
    for (const [ip, version] of pods) out.push(event("ADDED", versionedPod(name, "default", ip, version)));
    out.push(
      event(
        "ADDED",
        endpointSlice(
          `${name}-1`,
          name,
          "default",
          { name: "http", port: 9080 },
          pods.map(([ip]) => ({ ip, ready: true })),
        ),
      ),
    );
  }
  return out;
}

/** A third reviews pod, and the reviews slice with its endpoint (one endpoint change). */
export function reviewsScaled(): unknown[] {
  return [
    event("ADDED", versionedPod("reviews", "default", "10.1.0.15", "v3")),
    event(
      "MODIFIED",
      endpointSlice("reviews-1", "reviews", "default", { name: "http", port: 9080 }, [
        { ip: "10.1.0.12", ready: true },
        { ip: "10.1.0.13", ready: true },
        { ip: "10.1.0.15", ready: true },
      ]),
    ),
  ];
}

/** A second details pod at `ip`, and the details slice with its endpoint (an endpoint-only change). */
export function detailsScaled(ip: string): unknown[] {
  return [
    event("ADDED", versionedPod("details", "default", ip, "v1")),
    event(
      "MODIFIED",
      endpointSlice("details-1", "details", "default", { name: "http", port: 9080 }, [
        { ip: "10.1.0.11", ready: true },
        { ip, ready: true },
      ]),
    ),
  ];
}

/** The sidecar node of pod `pod` of `app` at `ip` in default (Istio metadata). */
export function sidecarNode(app: string, pod: string, ip: string) {
  return {
    id: `sidecar~${ip}~${pod}.default~default.svc.cluster.local`,
    metadata: { LABELS: { app, version: "v1" }, NAMESPACE: "default", CLUSTER_ID: "Kubernetes" },
  };
}

/** A service of namespace `other` exported to its own namespace only (networking.istio.io/exportTo "."). */
export function privateService(): unknown[] {
  const s = service("internal", "other", [{ name: "http", port: 9090 }]);
  return [
    event("ADDED", {
      ...s,
      metadata: { ...s.metadata, annotations: { "networking.istio.io/exportTo": "." } },
      spec: { ...s.spec, clusterIP: "10.96.1.1", clusterIPs: ["10.96.1.1"] },
    }),
    event("ADDED", versionedPod("internal", "other", "10.1.1.1", "v1")),
    event(
      "ADDED",
      endpointSlice("internal-1", "internal", "other", { name: "http", port: 9090 }, [
        { ip: "10.1.1.1", ready: true },
      ]),
    ),
  ];
}

/** The productpage sidecar's node, with the metadata istio-proxy sends. */
export function productpageNode(generator?: "grpc") {
  return {
    id: `sidecar~${productpageIp}~${podName("productpage", productpageIp)}.default~default.svc.cluster.local`,
    metadata: {
      LABELS: { app: "productpage", version: "v1" },
      NAMESPACE: "default",
      CLUSTER_ID: "Kubernetes",
      ISTIO_VERSION: "1.24.0",
      INTERCEPTION_MODE: "REDIRECT",
      ...(generator && { GENERATOR: generator }),
    },
  };
}

/** Decoded resources of one type, by name. */
export function decoded(typeUrl: string, bodies: ReadonlyMap<string, Uint8Array>) {
  const out = new Map<string, Cluster | Listener | RouteConfiguration>();
  for (const [name, body] of bodies) {
    if (typeUrl === TypeUrl.cluster) out.set(name, fromBinary(ClusterSchema, body));
    else if (typeUrl === TypeUrl.listener) out.set(name, fromBinary(ListenerSchema, body));
    else if (typeUrl === TypeUrl.route) out.set(name, fromBinary(RouteConfigurationSchema, body));
  }
  return out;
}

/** The name of an encoded resource (a ClusterLoadAssignment's cluster_name). */
export function nameOf(typeUrl: string, body: Uint8Array): string {
  if (typeUrl === TypeUrl.endpoint) return fromBinary(ClusterLoadAssignmentSchema, body).clusterName;
  const one = decoded(typeUrl, new Map([["", body]])).get("");
  return one?.name ?? "";
}
/** The names of the EDS clusters' assignments (what Envoy asks EDS for). */
export function edsNames(clusters: Iterable<Cluster>): string[] {
  const out: string[] = [];
  for (const c of clusters) {
    const t = c.clusterDiscoveryType;
    if (t.case === "type" && t.value === Cluster_DiscoveryType.EDS)
      out.push(c.edsClusterConfig?.serviceName || c.name);
  }
  return out.sort();
}

/** The RDS names the listeners' HTTP connection managers take. */
export function rdsNames(listeners: Iterable<Listener>): string[] {
  const out = new Set<string>();
  for (const l of listeners)
    for (const chain of l.filterChains) {
      const name = rdsOf(chain);
      if (name !== undefined) out.add(name);
    }
  return [...out].sort();
}
