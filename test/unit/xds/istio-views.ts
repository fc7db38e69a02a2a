/** Builders for service views carrying Istio config (VirtualService / DestinationRule models). */
import { toDestinationRule } from "../../../lib/registry/istio/destination-rule.ts";
import { toVirtualService } from "../../../lib/registry/istio/virtual-service.ts";
import type { ServiceView } from "../../../lib/resources/types.ts";
import { destinationRule, httpRoute, virtualService } from "../registry/istio/builders.ts";
import { endpoint, port, service, shards, view } from "./builders.ts";

export { httpRoute };

/** A VirtualService model for reviews (namespace default) with `spec` fields replaced. */
export const vsModel = (spec: Record<string, unknown> = {}) => {
  const o = virtualService(spec);
  return toVirtualService(o.metadata, o.spec, "cluster.local");
};

/** A DestinationRule model for reviews (subsets v1, v2) with `spec` fields replaced. */
export const drModel = (spec: Record<string, unknown> = {}) => {
  const o = destinationRule(spec);
  return toDestinationRule(o.metadata, o.spec, "cluster.local");
};

/** reviews on ports 9080 (grpc) and 8080, endpoints labelled v1 (10.0.0.1) and v2 (10.0.0.2, 10.0.0.3). */
export const istioView = (o: Partial<ServiceView> = {}): ServiceView =>
  view({
    services: [service({ ports: [port(), port({ name: "http", port: 8080, protocol: "HTTP" })] })],
    shards: shards({
      "Kubernetes/Kubernetes": [
        endpoint({ labels: { app: "reviews", version: "v1" } }),
        endpoint({ address: "10.0.0.2", labels: { app: "reviews", version: "v2" } }),
        endpoint({ address: "10.0.0.3", labels: { version: "v2" } }),
        endpoint({ address: "10.0.0.2", port: 8080, servicePortName: "http", labels: { version: "v2" } }),
      ],
    }),
    ...o,
  });
