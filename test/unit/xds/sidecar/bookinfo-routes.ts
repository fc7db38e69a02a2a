/**
 * A bookinfo-like mesh as a productpage sidecar sees it (Istio's samples/bookinfo: productpage,
 * details, ratings, reviews v1/v2/v3 on 9080 over HTTP, a VirtualService and DestinationRule for
 * reviews), plus a TCP service (mongodb, port name `mongo`), a port without a protocol (legacy
 * 7070, unnamed ▶ sniffed) and an HTTP service in another namespace (httpbin.other 8000).
 */
import type { Service, ServicePort } from "../../../../lib/model/index.ts";
import type { ServiceInstance, SidecarInputs } from "../../../../lib/resources/generators/sidecar/types.ts";
import { defaultSidecarMesh } from "../../../../lib/resources/generators/sidecar/types.ts";
import type { ServiceView } from "../../../../lib/resources/types.ts";
import { endpoint, service, shards } from "../builders.ts";
import { drModel, vsModel } from "../istio-views.ts";
import { NS, PROXY_IP, productpageProxy } from "./bookinfo.ts";

export { NODE_ID, NS } from "./bookinfo.ts";
/** The productpage sidecar's IP (bookinfo.ts PROXY_IP). */
export const PRODUCTPAGE_IP = PROXY_IP;

const host = (name: string, ns = NS) => `${name}.${ns}.svc.cluster.local`;
const http = (port: number): ServicePort => ({ name: "http", port, protocol: "HTTP" });

/** One service view (one cluster record), endpoints unimportant to LDS/RDS. */
export function svcView(
  name: string,
  ports: ServicePort[],
  addresses: string[],
  o: Partial<Service> & { view?: Partial<ServiceView> } = {},
): ServiceView {
  const { view: vo, ...so } = o;
  const ns = so.namespace ?? NS;
  const hostname = host(name, ns);
  return {
    hostname,
    namespace: ns,
    services: [service({ hostname, name, namespace: ns, addresses, ports, ...so })],
    shards: { ...shards({ "Kubernetes/Kubernetes": [endpoint()] }), hostname, namespace: ns },
    ...vo,
  };
}

/**
 * reviews' VirtualService (Istio's virtual-service-reviews-jason-v2-v3.yaml shape): end-user jason
 * ▶ v2, everyone else ▶ v3; and its DestinationRule with subsets v1, v2, v3.
 */
export const reviewsVs = vsModel({
  hosts: ["reviews"],
  http: [
    {
      name: "jason",
      match: [{ headers: { "end-user": { exact: "jason" } } }],
      route: [{ destination: { host: "reviews", subset: "v2" } }],
    },
    {
      name: "split",
      route: [
        { destination: { host: "reviews", subset: "v1" }, weight: 50 },
        { destination: { host: "reviews", subset: "v3" }, weight: 50 },
      ],
    },
  ],
});
export const reviewsDr = drModel({
  subsets: [
    { name: "v1", labels: { version: "v1" } },
    { name: "v2", labels: { version: "v2" } },
    { name: "v3", labels: { version: "v3" } },
  ],
});

/** The visible services (each with what the flush would attach). */
export function bookinfoServices(withIstioConfig = true): ServiceView[] {
  return [
    svcView("productpage", [http(9080)], ["10.96.0.20"]),
    svcView("details", [http(9080)], ["10.96.0.12"]),
    svcView("ratings", [http(9080)], ["10.96.0.11"]),
    svcView("reviews", [http(9080)], ["10.96.0.10"], {
      view: withIstioConfig ? { virtualService: reviewsVs, destinationRule: reviewsDr } : {},
    }),
    svcView("mongodb", [{ name: "mongo", port: 27017, protocol: "Mongo" }], ["10.96.0.30"]),
    svcView("legacy", [{ name: "", port: 7070, protocol: "UnsupportedProtocol" }], ["10.96.0.40"]),
    svcView("httpbin", [http(8000)], ["10.96.0.50"], { namespace: "other" }),
  ];
}

/** productpage's own service instance: port 9080 served at its pod IP. */
export function productpageInstance(): ServiceInstance {
  const svc = bookinfoServices()[0]?.services[0] as Service;
  return {
    service: svc,
    servicePort: svc.ports[0] as ServicePort,
    targetPort: 9080,
    endpoint: endpoint({ address: PRODUCTPAGE_IP, servicePortName: "http" }),
  };
}

/** The productpage sidecar's inputs; `o` replaces parts (services, mesh, instances). */
export function bookinfoInputs(o: Partial<SidecarInputs> = {}): SidecarInputs {
  return {
    proxy: productpageProxy(),
    instances: [productpageInstance()],
    services: bookinfoServices(),
    mesh: { ...defaultSidecarMesh },
    ...o,
  };
}
