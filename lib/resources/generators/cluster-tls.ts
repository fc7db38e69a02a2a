/**
 * The upstream TLS of a proxyless gRPC Cluster, as Istio's grpcgen applyTLS: a DestinationRule's
 * ISTIO_MUTUAL becomes an UpstreamTlsContext from the bootstrap's certificate provider that accepts
 * only the destination's service accounts; DISABLE, SIMPLE and MUTUAL give none (grpcgen supports
 * neither of the latter: their certificates would have to be files the client names itself).
 * Without a rule's `tls`, auto-mTLS: a gRPC client has no transport_socket_matches, so mTLS is chosen
 * for the whole cluster, only when every endpoint of the port carries `security.istio.io/tlsMode:
 * istio` and none of their workloads takes the port with DISABLE (their servers then serve mTLS:
 * server-listener.ts serverTlsMode). A mesh without those labels gets exactly the clusters it had;
 * MeshConfig enableAutoMtls false turns auto-mTLS off (a rule's ISTIO_MUTUAL still applies).
 */
import type { TransportSocket } from "../../gen/envoy/config/core/v3/base_pb.ts";
import type { ServicePort } from "../../model/index.ts";
import type { ClientTls } from "../../registry/istio/traffic-policy.ts";
import type { ServiceView } from "../types.ts";
import { upstreamTlsSocket } from "./grpc-tls.ts";
import { TLS_MODE_LABEL } from "./server-listener.ts";
import { accountsOf } from "./sidecar/cluster-outbound.ts";

/** The transport_socket of the cluster of `port` (a subset's too) under `tls`, or none. */
export function clientTransportSocket(
  view: ServiceView,
  port: ServicePort,
  tls: ClientTls | undefined,
  autoMtlsOn = true,
): TransportSocket | undefined {
  if (tls)
    return tls.mode === "ISTIO_MUTUAL" ? upstreamTlsSocket(accountsOf(view, view.services)) : undefined;
  return autoMtlsOn && autoMtls(view, port) ? upstreamTlsSocket(accountsOf(view, view.services)) : undefined;
}

/**
 * Whether a client reaches every endpoint of `port` with mTLS: at least one endpoint, all labelled
 * tlsMode istio, none a workload whose PeerAuthentication disables mTLS on its target port; never
 * for a mesh-external service.
 */
export function autoMtls(view: ServiceView, port: ServicePort): boolean {
  if (view.services.some((s) => s.meshExternal === true)) return false;
  let any = false;
  for (const endpoints of Object.values(view.shards?.shards ?? {}))
    for (const e of endpoints) {
      if (e.servicePortName !== port.name) continue;
      if (e.labels[TLS_MODE_LABEL] !== "istio") return false;
      const workload = { namespace: view.namespace, labels: e.labels };
      if (view.peerMtls?.mtlsForPort(workload, e.port) === "DISABLE") return false;
      any = true;
    }
  return any;
}
