/**
 * `edgepilot agent bootstrap --generator envoy`: the Envoy v3 bootstrap that points an Envoy of this
 * pod at the local agent, as Istio's pilot-agent writes it (tools/packaging/common/envoy_bootstrap.json,
 * pkg/bootstrap): the node (id, cluster, locality, metadata) from the pod's environment; ADS over one
 * gRPC stream (SotW, V3, the node on the first message only) for listeners and clusters, which wait
 * for nothing (initial_fetch_timeout 0s: the agent answers from its cache); the `xds-grpc` static
 * cluster over HTTP/2 to the agent's Unix socket (a pipe address) or loopback port; the `sds-grpc`
 * static cluster to the agent's SDS socket, as Istio's template has it; admin on loopback.
 * Envoy's Bootstrap proto and its validate rules accept it (test/unit/agent/envoy-bootstrap.test.ts).
 */
import type { BootstrapInput } from "./bootstrap.ts";
import { defaultSdsSocket } from "./cert-config.ts";

/** What Istio's pilot-agent adds to an Envoy's node from the pod's environment, and the admin port. */
export interface EnvoyNodeInput {
  /** Envoy's admin interface on loopback (Istio's ProxyAdminPort, default 15000). */
  adminPort: number;
  /** `ISTIO_META_<KEY>=<value>` variables, as node metadata `<KEY>: <value>`. */
  meta: Record<string, string>;
  /** Pod labels from ISTIO_METAJSON_LABELS (a JSON object of strings). */
  labels: Record<string, string>;
  /** SERVICE_ACCOUNT, if set. */
  serviceAccount: string;
  /** The agent's SDS socket (EDGEPILOT_AGENT_SDS_SOCKET, Istio's by default): the `sds-grpc` cluster's pipe. */
  sdsSocket: string;
}

const metaKey = /^[A-Za-z0-9_.-]{1,253}$/;

/** The pod's labels from ISTIO_METAJSON_LABELS (a JSON object of strings; absent: none), as Istio's agent reads them. */
export function parsePodLabels(
  env: Record<string, string | undefined>,
  errors: string[],
): Record<string, string> {
  const raw = env.ISTIO_METAJSON_LABELS;
  if (!raw) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  const ok =
    typeof parsed === "object" &&
    parsed !== null &&
    !Array.isArray(parsed) &&
    Object.values(parsed).every((v) => typeof v === "string");
  if (ok) return parsed as Record<string, string>;
  errors.push("ISTIO_METAJSON_LABELS: not a JSON object of strings (the pod's labels)");
  return {};
}

/** Reads EnvoyNodeInput from the environment, `--admin-port` and `--sds-socket`; each problem names its variable or flag. */
export function parseEnvoyInput(
  env: Record<string, string | undefined>,
  adminPort: string | undefined,
  errors: string[],
  sdsSocket?: string,
): EnvoyNodeInput {
  const port = adminPort ?? "15000";
  if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535)
    errors.push(`--admin-port=${JSON.stringify(port)}: not a port (1-65535)`);
  const meta: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith("ISTIO_META_") || value === undefined) continue;
    const key = name.slice("ISTIO_META_".length);
    if (metaKey.test(key)) meta[key] = value;
    else errors.push(`${JSON.stringify(name).slice(0, 300)}: not a metadata key`);
  }
  const labels = parsePodLabels(env, errors);
  return {
    adminPort: Number(port),
    meta,
    labels,
    serviceAccount: env.SERVICE_ACCOUNT ?? "",
    sdsSocket: sdsSocket || env.EDGEPILOT_AGENT_SDS_SOCKET || defaultSdsSocket,
  };
}

/**
 * Istio's service cluster for the node (pkg/bootstrap serviceClusterOrDefault): `<app label>.<ns>`,
 * else `<workload name>.<ns>`, else `istio-proxy.<ns>`.
 */
export function envoyServiceCluster(namespace: string, e: EnvoyNodeInput): string {
  const app = e.labels.app;
  if (app) return `${app}.${namespace}`;
  const workload = e.meta.WORKLOAD_NAME;
  if (workload) return `${workload}.${namespace}`;
  return `istio-proxy.${namespace}`;
}

/** The Envoy bootstrap (proto3 JSON, snake_case names) for `input`, whose `envoy` part is set. */
export function envoyBootstrap(input: BootstrapInput & { envoy: EnvoyNodeInput }): Record<string, unknown> {
  const ns = input.namespace;
  const e = input.envoy;
  // Typed fields win over ISTIO_META_ ones, as pilot-agent's typed metadata does over the raw.
  const metadata: Record<string, unknown> = {
    ...e.meta,
    NAMESPACE: ns,
    INSTANCE_IPS: input.podIp,
    NAME: input.podName,
    ...(Object.keys(e.labels).length > 0 && { LABELS: e.labels }),
    ...(e.serviceAccount && { SERVICE_ACCOUNT: e.serviceAccount }),
  };
  // The loopback of the pod's IP family, for admin (the agent itself listens on 127.0.0.1).
  const localhost = input.podIp.includes(":") ? "::1" : "127.0.0.1";
  const agentAddress = input.serverUri.startsWith("unix:")
    ? { pipe: { path: input.serverUri.slice("unix:".length) } }
    : (() => {
        const at = input.serverUri.lastIndexOf(":");
        return {
          socket_address: {
            address: input.serverUri.slice(0, at),
            port_value: Number(input.serverUri.slice(at + 1)),
          },
        };
      })();
  const ads = { ads: {}, initial_fetch_timeout: "0s", resource_api_version: "V3" };
  const limits = { max_connections: 100000, max_pending_requests: 100000, max_requests: 100000 };
  const http2 = {
    "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
      "@type": "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
      explicit_http_config: { http2_protocol_options: {} },
    },
  };
  return {
    node: {
      id: `sidecar~${input.podIp}~${input.podName}.${ns}~${ns}.svc.${input.domainSuffix}`,
      cluster: envoyServiceCluster(ns, e),
      ...(input.locality && {
        locality: {
          ...(input.locality.region && { region: input.locality.region }),
          ...(input.locality.zone && { zone: input.locality.zone }),
          ...(input.locality.subZone && { sub_zone: input.locality.subZone }),
        },
      }),
      metadata,
    },
    admin: { address: { socket_address: { address: localhost, port_value: e.adminPort } } },
    dynamic_resources: {
      lds_config: ads,
      cds_config: ads,
      ads_config: {
        api_type: "GRPC",
        transport_api_version: "V3",
        set_node_on_first_message_only: true,
        grpc_services: [{ envoy_grpc: { cluster_name: "xds-grpc" } }],
      },
    },
    static_resources: {
      clusters: [
        {
          name: "xds-grpc",
          type: "STATIC",
          connect_timeout: "1s",
          lb_policy: "ROUND_ROBIN",
          load_assignment: {
            cluster_name: "xds-grpc",
            endpoints: [{ lb_endpoints: [{ endpoint: { address: agentAddress } }] }],
          },
          // One ADS stream per Envoy; the agent, not this cluster, limits what it takes.
          circuit_breakers: {
            thresholds: [
              { priority: "DEFAULT", ...limits },
              { priority: "HIGH", ...limits },
            ],
          },
          typed_extension_protocol_options: http2,
        },
        // Istio's bootstrap template's sds-grpc, field for field: the agent's SDS over HTTP/2 on its socket.
        {
          name: "sds-grpc",
          alt_stat_name: "sds-grpc;",
          type: "STATIC",
          typed_extension_protocol_options: http2,
          connect_timeout: "1s",
          lb_policy: "ROUND_ROBIN",
          load_assignment: {
            cluster_name: "sds-grpc",
            endpoints: [{ lb_endpoints: [{ endpoint: { address: { pipe: { path: e.sdsSocket } } } }] }],
          },
        },
      ],
    },
  };
}
