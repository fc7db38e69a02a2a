/**
 * A bookinfo-like mesh as sidecar generator inputs (istio/istio samples/bookinfo): productpage,
 * details, ratings, reviews v1/v2/v3 (with a DestinationRule naming the three subsets), a gRPC
 * service, a service with an unnamed (sniffed) port, a headless service, and a DNS ServiceEntry.
 * The proxy is productpage-v1's sidecar at 10.0.0.5.
 */

import type { Endpoint, Service, ServicePort } from "../../../../lib/model/index.ts";
import { toDestinationRule } from "../../../../lib/registry/istio/destination-rule.ts";
import type { ExternalService } from "../../../../lib/registry/istio/external-services.ts";
import {
  defaultSidecarMesh,
  type SidecarInputs,
} from "../../../../lib/resources/generators/sidecar/types.ts";
import type { ServiceView } from "../../../../lib/resources/types.ts";
import { destinationRule } from "../../registry/istio/builders.ts";

export const NS = "default";
export const host = (name: string) => `${name}.${NS}.svc.cluster.local`;
export const PROXY_IP = "10.0.0.5";
export const NODE_ID = `sidecar~${PROXY_IP}~productpage-v1-6b746f74dc-9stvs.${NS}~${NS}.svc.cluster.local`;

const http = (port: number, name = "http"): ServicePort => ({ name, port, protocol: "HTTP" });

export function svc(name: string, ports: ServicePort[], o: Partial<Service> = {}): Service {
  return {
    hostname: host(name),
    name,
    namespace: NS,
    clusterId: "Kubernetes",
    resolution: "ClientSideLB",
    addresses: ["10.96.0.1"],
    ports,
    labels: { app: name },
    ...o,
  };
}

export function ep(address: string, port: number, portName: string, o: Partial<Endpoint> = {}): Endpoint {
  return {
    address,
    port,
    servicePortName: portName,
    labels: {},
    locality: { region: "", zone: "", subzone: "" },
    serviceAccount: "",
    health: "HEALTHY",
    ...o,
  };
}

/** A view of one service with its endpoints in one Kubernetes shard. */
export function sview(s: Service, endpoints: Endpoint[], o: Partial<ServiceView> = {}): ServiceView {
  const accounts = [...new Set(endpoints.map((e) => e.serviceAccount).filter((a) => a !== ""))].sort();
  return {
    hostname: s.hostname,
    namespace: s.namespace,
    services: [s],
    shards: {
      hostname: s.hostname,
      namespace: s.namespace,
      shards: { "Kubernetes/Kubernetes": endpoints },
      serviceAccounts: accounts,
    },
    ...o,
  };
}

const sa = (name: string) => `spiffe://cluster.local/ns/${NS}/sa/bookinfo-${name}`;
const version = (v: string) => ({ app: "reviews", version: v });

/** The reviews DestinationRule of bookinfo's destination-rule-all.yaml: subsets v1, v2, v3. */
export function reviewsRule(spec: Record<string, unknown> = {}) {
  const o = destinationRule({
    subsets: [
      { name: "v1", labels: { version: "v1" } },
      { name: "v2", labels: { version: "v2" } },
      { name: "v3", labels: { version: "v3" } },
    ],
    ...spec,
  });
  return toDestinationRule(o.metadata, o.spec, "cluster.local");
}

export const productpage = svc("productpage", [http(9080)]);

/** reviews with its rule (or `rule`), endpoints v1/v2/v3. */
export function reviewsView(rule = reviewsRule()): ServiceView {
  return sview(
    svc("reviews", [http(9080)]),
    ["v1", "v2", "v3"].map((v, i) =>
      ep(`10.0.1.${i + 1}`, 9080, "http", { labels: version(v), serviceAccount: sa("reviews") }),
    ),
    { destinationRule: rule },
  );
}

/** api.example.com:443 from a ServiceEntry with resolution DNS, MESH_EXTERNAL (one host endpoint). */
export const externalApi: ExternalService = {
  ...svc("api.example.com", [{ name: "tls", port: 443, protocol: "TLS" }]),
  hostname: "api.example.com",
  name: "api.example.com",
  resolution: "DNSLB",
  addresses: [],
  labels: {},
  meshExternal: true,
  serviceEntry: { name: "external-api" },
};

/** The whole mesh the productpage sidecar sees. */
export function bookinfoViews(): ServiceView[] {
  return [
    sview(productpage, [ep(PROXY_IP, 9080, "http", { serviceAccount: sa("productpage") })]),
    sview(svc("details", [http(9080)]), [ep("10.0.2.1", 9080, "http", { serviceAccount: sa("details") })]),
    sview(svc("ratings", [http(9080)]), [ep("10.0.3.1", 9080, "http", { serviceAccount: sa("ratings") })]),
    reviewsView(),
    sview(svc("echo", [{ name: "grpc", port: 7070, protocol: "GRPC" }]), [ep("10.0.4.1", 7070, "grpc")]),
    sview(svc("legacy", [{ name: "", port: 8000, protocol: "UnsupportedProtocol" }]), [
      ep("10.0.5.1", 8000, ""),
    ]),
    sview(
      svc("mongodb", [{ name: "mongo", port: 27017, protocol: "Mongo" }], {
        resolution: "Passthrough",
        addresses: [],
      }),
      [ep("10.0.6.1", 27017, "mongo")],
    ),
    sview(externalApi, [ep("api.example.com", 443, "tls")]),
  ];
}

/** The productpage sidecar: its node id, IP, namespace and labels (the proxy both bookinfo fixtures pose as). */
export function productpageProxy(): SidecarInputs["proxy"] {
  return {
    nodeId: NODE_ID,
    parts: {
      type: "sidecar",
      ip: PROXY_IP,
      id: `productpage-v1-6b746f74dc-9stvs.${NS}`,
      dnsDomain: `${NS}.svc.cluster.local`,
    },
    ipAddresses: [PROXY_IP],
    namespace: NS,
    metadata: { labels: { app: "productpage", version: "v1" }, clusterId: "Kubernetes" },
  };
}

/** The productpage sidecar's inputs: its one service instance, productpage:9080 ▶ 9080. */
export function bookinfoInputs(o: Partial<SidecarInputs> = {}): SidecarInputs {
  return {
    proxy: productpageProxy(),
    instances: [
      {
        service: productpage,
        servicePort: http(9080),
        targetPort: 9080,
        endpoint: ep(PROXY_IP, 9080, "http", { serviceAccount: sa("productpage") }),
      },
    ],
    services: bookinfoViews(),
    mesh: { ...defaultSidecarMesh },
    ...o,
  };
}
