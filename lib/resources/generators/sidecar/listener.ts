/**
 * LDS for an Envoy sidecar, as istiod's BuildListeners for a sidecar captured by iptables
 * (pilot/pkg/networking/core/listener.go buildSidecarListeners, listener_builder.go getListeners):
 * the outbound listeners, then virtualOutbound, then virtualInbound, then the inbound listeners a
 * Sidecar's ingress binds to their own ports. Pure: inputs in, listeners out.
 * Only virtualInbound depends on the proxy itself (its service instances); the rest depends on the
 * services it sees and the mesh settings, so proxies with the same view share them.
 */
import { ListenerSchema } from "../../../gen/envoy/config/listener/v3/listener_pb.ts";
import type { Generated } from "../../types.ts";
import { outboundListeners } from "./listener-outbound.ts";
import {
  boundInboundListeners,
  virtualInboundListener,
  virtualOutboundListener,
} from "./listener-virtual.ts";
import type { SidecarInputs } from "./types.ts";

/** Every Listener of the sidecar, in istiod's order (outbound sorted by name, then the two virtual ones). */
export function sidecarListeners(inputs: SidecarInputs): Generated<typeof ListenerSchema>[] {
  return [
    ...outboundListeners(inputs),
    virtualOutboundListener(inputs),
    virtualInboundListener(inputs),
    ...boundInboundListeners(inputs),
  ].map((message) => ({ name: message.name, schema: ListenerSchema, message }));
}
