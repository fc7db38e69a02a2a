/**
 * What the xDS sessions read of a proxy's node: its GENERATOR, the labels a proxy status shows
 * (CLUSTER_ID, ISTIO_VERSION, NETWORK, REQUESTED_NETWORK_VIEW), and the small copy a stream keeps
 * for its whole life. Shared by the SotW and Delta sessions and the Poll reader.
 */
import { create } from "@bufbuild/protobuf";
import { type Node, NodeSchema } from "../gen/envoy/config/core/v3/base_pb.ts";
import { requestedNetworks } from "../resources/network-view.ts";

/**
 * What a stream keeps of the node of its first request: the id, GENERATOR and the status labels
 * (a gateway's LABELS among them, bounded where its record is written). A node's
 * metadata can be as large as a whole request message (EDGEPILOT_MAX_REQUEST_BYTES), and a stream
 * lives for hours, so the rest is dropped instead of held once per stream.
 */
export function retainedNode(node: Node): Node {
  const generator = nodeGenerator(node);
  const { cluster, istioVersion, network, networkView, labels } = nodeLabels(node);
  const metadata = {
    ...(generator && { GENERATOR: generator }),
    ...(labels !== undefined && { LABELS: labels }),
    ...(cluster !== undefined && { CLUSTER_ID: cluster }),
    ...(istioVersion !== undefined && { ISTIO_VERSION: istioVersion }),
    ...(network !== undefined && { NETWORK: network }),
    ...(networkView !== undefined && { REQUESTED_NETWORK_VIEW: networkView }),
  };
  return create(NodeSchema, { id: node.id, ...(Object.keys(metadata).length > 0 && { metadata }) });
}

/**
 * What a proxy status shows of a node beside its id (istiod's SyncStatus cluster_id and
 * istio_version): metadata CLUSTER_ID and ISTIO_VERSION when they are strings, else absent; and
 * its network view (NETWORK; REQUESTED_NETWORK_VIEW comma-joined, sorted), so what it was served
 * can be read again through that view (config_dump); for a `router~` node its LABELS (string
 * values), which pick the Gateways it is served.
 */
export function nodeLabels(node: Node | undefined): {
  cluster?: string;
  istioVersion?: string;
  network?: string;
  networkView?: string;
  labels?: Record<string, string>;
} {
  const c = node?.metadata?.CLUSTER_ID;
  const v = node?.metadata?.ISTIO_VERSION;
  const n = node?.metadata?.NETWORK;
  const view = requestedNetworks(node?.metadata?.REQUESTED_NETWORK_VIEW);
  return {
    ...(typeof c === "string" && { cluster: c }),
    ...(typeof v === "string" && { istioVersion: v }),
    ...(typeof n === "string" && n !== "" && { network: n }),
    ...(view !== undefined && { networkView: view.join(",") }),
    ...(node?.id.startsWith("router~") && { labels: stringLabels(node.metadata?.LABELS) }),
  };
}

/** Labels kept of a gateway's node: a pod has far fewer, and a stream holds them for its whole life. */
const maxLabels = 64;

/** The string values of a LABELS metadata value, the first maxLabels of them. */
function stringLabels(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof v !== "object" || v === null || Array.isArray(v)) return out;
  let n = 0;
  for (const [k, x] of Object.entries(v)) {
    if (typeof x !== "string") continue;
    if (n++ >= maxLabels) break;
    out[k] = x;
  }
  return out;
}

/** The GENERATOR metadata of a node (`grpc` for proxyless gRPC), "" when absent or not a string. */
export function nodeGenerator(node: Node | undefined): string {
  const g = node?.metadata?.GENERATOR;
  return typeof g === "string" ? g : "";
}
