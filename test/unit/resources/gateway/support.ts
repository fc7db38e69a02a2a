/**
 * Builders for gateway generator tests: a bookinfo mesh (test/unit/xds/sidecar/bookinfo.ts) seen
 * by the ingress gateway proxy `router~10.0.9.1~istio-ingressgateway-abc.istio-system~…`, Gateways
 * and VirtualServices written as the API server sends their specs, and the whole generated set
 * checked against Envoy's PGV rules and for dangling references.
 */

import { type GatewayModel, toGateway } from "../../../../lib/registry/istio/gateway.ts";
import { mergeGateways, type PortMapping } from "../../../../lib/registry/istio/gateway-merge.ts";
import {
  type GatewayVirtualService,
  toGatewayVirtualService,
} from "../../../../lib/registry/istio/gateway-routes.ts";
import { endpointGenerator } from "../../../../lib/resources/generators/endpoint.ts";
import { gatewayClusters } from "../../../../lib/resources/generators/gateway/cluster.ts";
import { gatewayListeners } from "../../../../lib/resources/generators/gateway/listener.ts";
import { gatewayRouteConfigurations } from "../../../../lib/resources/generators/gateway/route.ts";
import type { GatewayInputs } from "../../../../lib/resources/generators/gateway/types.ts";
import { defaultSidecarMesh } from "../../../../lib/resources/generators/sidecar/types.ts";
import { assertEnvoyValid } from "../../../support/xds-check.ts";
import { danglingReferences } from "../../../support/xds-refs.ts";
import { bookinfoViews } from "../../xds/sidecar/bookinfo.ts";
import { encode } from "../../xds/sidecar/check.ts";

export const GW_NS = "istio-system";
export const GW_IP = "10.0.9.1";
export const GW_NODE = `router~${GW_IP}~istio-ingressgateway-abc.${GW_NS}~${GW_NS}.svc.cluster.local`;
export const ingressLabels = { istio: "ingressgateway" };

/** A Gateway in `namespace` (default istio-system) selecting the ingress gateway. */
export function gateway(name: string, servers: unknown[], o: { namespace?: string; created?: string } = {}) {
  return toGateway(
    {
      name,
      namespace: o.namespace ?? GW_NS,
      ...(o.created && { creationTimestamp: o.created }),
    },
    { selector: ingressLabels, servers },
  );
}

/** A VirtualService in `namespace` (default `default`) with `spec`. */
export function virtualService(
  name: string,
  spec: Record<string, unknown>,
  o: { namespace?: string; exportTo?: string[]; created?: string } = {},
): GatewayVirtualService {
  return toGatewayVirtualService(
    { name, namespace: o.namespace ?? "default", ...(o.created && { creationTimestamp: o.created }) },
    spec,
    "cluster.local",
    o.exportTo ?? (spec.exportTo as string[] | undefined) ?? [],
  );
}

/** The inputs of the ingress gateway for `gateways` and `virtualServices`. */
export function gatewayInputs(
  gateways: GatewayModel[],
  virtualServices: GatewayVirtualService[],
  ports: PortMapping[] = [],
): GatewayInputs {
  return {
    proxy: {
      nodeId: GW_NODE,
      parts: {
        type: "router",
        ip: GW_IP,
        id: `istio-ingressgateway-abc.${GW_NS}`,
        dnsDomain: `${GW_NS}.svc.cluster.local`,
      },
      ipAddresses: [GW_IP],
      namespace: GW_NS,
      metadata: { labels: ingressLabels, clusterId: "Kubernetes" },
    },
    merged: mergeGateways(gateways, ports),
    virtualServices,
    services: bookinfoViews(),
    mesh: { ...defaultSidecarMesh },
  };
}

/**
 * Generates every gateway resource for `inputs`, asserts each passes PGV, and returns them with
 * the dangling references of the whole set (with the services' assignments).
 */
export function generateGateway(inputs: GatewayInputs) {
  const clusters = gatewayClusters(inputs);
  const listeners = gatewayListeners(inputs);
  const routes = gatewayRouteConfigurations(inputs);
  const encoded = [...clusters, ...listeners, ...routes].map(encode);
  assertEnvoyValid(encoded, "gateway CDS/LDS/RDS");
  const ctx = { domainSuffix: "cluster.local" };
  const eds = inputs.services.flatMap((v) => endpointGenerator.generate(v, ctx)).map(encode);
  return { clusters, listeners, routes, dangling: danglingReferences([...encoded, ...eds]) };
}
