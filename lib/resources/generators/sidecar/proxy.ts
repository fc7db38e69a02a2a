/**
 * A sidecar's node as istiod reads it (pilot/pkg/model/context.go ParseServiceNodeWithMetadata,
 * Proxy.ConfigNamespace) and its service instances (GetProxyServiceTargets: the service ports whose
 * endpoints sit at one of the proxy's IPs). Pure: a node id and metadata in, a SidecarProxy or an
 * error naming what was wrong out.
 */
import type { JsonObject } from "@bufbuild/protobuf";
import { parseIp } from "../../../model/ip.ts";
import type { ServiceView } from "../../types.ts";
import type { ProxyType, ServiceInstance, SidecarProxy } from "./types.ts";

/** A parsed proxy, or why the node cannot be one. */
export type ProxyParse = { ok: true; proxy: SidecarProxy } | { ok: false; error: string };

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/**
 * `<type>~<ip>~<pod>.<ns>~<ns>.svc.<suffix>`: four `~` fields, type `sidecar` or `router`, the IP a
 * valid address. IPs are the node id's, then metadata INSTANCE_IPS (comma separated) that parse,
 * unique; the namespace is metadata NAMESPACE, else the id after its first dot, else the first label
 * of the DNS domain; labels are metadata LABELS' string values.
 */
export function parseSidecarNode(nodeId: string, metadata: JsonObject | undefined): ProxyParse {
  const parts = nodeId.split("~");
  if (parts.length !== 4) return { ok: false, error: `node id has ${parts.length} "~" fields, want 4` };
  const [type, ip, id, dnsDomain] = parts as [string, string, string, string];
  if (type !== "sidecar" && type !== "router")
    return { ok: false, error: `node type must be sidecar or router` };
  if (!parseIp(ip).ok) return { ok: false, error: "node id's second field is not an IP address" };
  const ips = [ip];
  for (const extra of (str(metadata?.INSTANCE_IPS) ?? "").split(",")) {
    const t = extra.trim();
    if (t !== "" && parseIp(t).ok && !ips.includes(t)) ips.push(t);
  }
  const dot = id.indexOf(".");
  const namespace =
    str(metadata?.NAMESPACE) ?? (dot >= 0 ? id.slice(dot + 1) : undefined) ?? dnsDomain.split(".")[0] ?? "";
  const rawLabels = metadata?.LABELS;
  const labels: Record<string, string> = {};
  if (rawLabels && typeof rawLabels === "object" && !Array.isArray(rawLabels))
    for (const [k, v] of Object.entries(rawLabels)) if (typeof v === "string") labels[k] = v;
  const mode = str(metadata?.INTERCEPTION_MODE);
  return {
    ok: true,
    proxy: {
      nodeId,
      parts: { type: type as ProxyType, ip, id, dnsDomain },
      ipAddresses: ips,
      namespace,
      metadata: {
        labels,
        ...(str(metadata?.CLUSTER_ID) && { clusterId: str(metadata?.CLUSTER_ID) }),
        ...(str(metadata?.ISTIO_VERSION) && { istioVersion: str(metadata?.ISTIO_VERSION) }),
        ...((mode === "REDIRECT" || mode === "TPROXY" || mode === "NONE") && { interceptionMode: mode }),
      },
    },
  };
}

/**
 * The proxy's service instances: for every view, every endpoint at one of the proxy's IPs, the
 * service port it serves (by port name, in the view's first record that has it), once per
 * (host, service port, target port); ordered by host, then service port.
 */
export function serviceInstances(proxy: SidecarProxy, views: readonly ServiceView[]): ServiceInstance[] {
  const ips = new Set(proxy.ipAddresses);
  const out = new Map<string, ServiceInstance>();
  for (const view of views) {
    for (const endpoints of Object.values(view.shards?.shards ?? {})) {
      for (const endpoint of endpoints) {
        if (!ips.has(endpoint.address)) continue;
        for (const service of view.services) {
          const servicePort = service.ports.find((p) => p.name === endpoint.servicePortName);
          if (!servicePort) continue;
          const key = `${view.hostname}|${servicePort.port}|${endpoint.port}`;
          if (!out.has(key)) out.set(key, { service, servicePort, targetPort: endpoint.port, endpoint });
          break;
        }
      }
    }
  }
  return [...out.values()].sort((a, b) =>
    a.service.hostname === b.service.hostname
      ? a.servicePort.port - b.servicePort.port
      : a.service.hostname < b.service.hostname
        ? -1
        : 1,
  );
}
