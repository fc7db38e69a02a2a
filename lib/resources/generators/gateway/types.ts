/**
 * What the gateway generators read (pilot/pkg/networking/core/gateway.go and cluster.go for a
 * `router` proxy): the proxy, its merged Gateways, the VirtualServices that may bind to them, the
 * services visible to its namespace (each with the DestinationRule chosen there) and the mesh
 * settings. Plain data, so the generators stay pure and a test builds them with literals.
 */
import type { MergedGateway } from "../../../registry/istio/gateway-merge.ts";
import type { GatewayVirtualService } from "../../../registry/istio/gateway-routes.ts";
import type { SecurityPolicies } from "../../../registry/istio/security.ts";
import type { ServiceView } from "../../types.ts";
import type { SidecarMeshSettings, SidecarProxy } from "../sidecar/types.ts";

/** Everything one gateway class's resources are generated from. */
export interface GatewayInputs {
  /** The gateway proxy (its namespace decides exportTo; its IP family the wildcard bind). */
  proxy: SidecarProxy;
  merged: MergedGateway;
  /** Every VirtualService gateways may bind (mesh-only ones are filtered by their `gateways`). */
  virtualServices: readonly GatewayVirtualService[];
  /** The services visible to the proxy's namespace, with their routing chosen for it. */
  services: readonly ServiceView[];
  mesh: SidecarMeshSettings;
  /** The push's PeerAuthentications (auto mTLS of the outbound clusters); absent: none. */
  security?: SecurityPolicies;
}
