/**
 * `edgepilot agent bootstrap --generator grpc|envoy`: the xDS bootstrap a proxyless gRPC client
 * (grpc-js-xds, gRPC C-core, grpc-go) or an Envoy (lib/agent/envoy-bootstrap.ts) needs to reach the
 * agent of its pod. The node is Istio's, from the pod's
 * environment (downward API): id `sidecar~<POD_IP>~<POD_NAME>.<POD_NAMESPACE>~<POD_NAMESPACE>.svc.<suffix>`,
 * metadata GENERATOR=grpc, NAMESPACE, INSTANCE_IPS and LABELS (ISTIO_METAJSON_LABELS), as istio-agent's
 * gRPC bootstrap sets them.
 */

import { defaultSdsSocket } from "./cert-config.ts";
import { type EnvoyNodeInput, parseEnvoyInput, parsePodLabels } from "./envoy-bootstrap.ts";

/** Istio's name template of a gRPC server's inbound Listener (pkg/istio-agent/grpcxds ServerListenerNameTemplate). */
export const serverListenerNameTemplate = "xds.istio.io/grpc/lds/inbound/%s";

/** How often gRPC's file_watcher provider re-reads the certificate files (Istio's grpc bootstrap: 15 minutes). */
export const certRefreshInterval = "900s";

/** What the bootstrap is built from; every field validated by parseBootstrapArgs. */
export interface BootstrapInput {
  generator: "grpc" | "envoy";
  podIp: string;
  podName: string;
  namespace: string;
  domainSuffix: string;
  /** `region/zone/sub_zone` (any part may be empty); absent: no locality. */
  locality?: { region: string; zone: string; subZone: string };
  /** Where the agent serves ADS: `unix:<path>` or `127.0.0.1:<port>`. */
  serverUri: string;
  /** Envoy only: its admin port and what pilot-agent adds to its node from the pod's environment. */
  envoy?: EnvoyNodeInput;
  /** gRPC only: the pod's labels (ISTIO_METAJSON_LABELS), node metadata LABELS: policies and auto-mTLS select by them. */
  labels?: Record<string, string>;
  /** gRPC only: the agent's OUTPUT_CERTS, read by the `default` file_watcher certificate provider; absent: none. */
  certDir?: string;
}

/** The parsed bootstrap input, or every problem found (each names its variable or flag). */
export type BootstrapArgs = { ok: true; input: BootstrapInput } | { ok: false; errors: string[] };

const label = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** `edgepilot agent bootstrap --help`: the flags and the pod variables the bootstrap is built from. */
export function bootstrapUsage(): string {
  return [
    "usage: edgepilot agent bootstrap --generator grpc|envoy [--locality region/zone/sub_zone]",
    "                                 [--socket path | --port n] [--admin-port n (envoy)]",
    "                                 [--output-certs dir (grpc)] [--sds-socket path (envoy)]",
    "",
    "Prints the xDS bootstrap (JSON) of a proxyless gRPC client or an Envoy of this pod, its server the agent.",
    "From the pod (downward API): POD_IP (or INSTANCE_IP), POD_NAME, POD_NAMESPACE; DOMAIN_SUFFIX (cluster.local);",
    "the agent's EDGEPILOT_AGENT_SOCKET, else EDGEPILOT_AGENT_PORT (15011); its OUTPUT_CERTS (grpc: the",
    `certificate files) and EDGEPILOT_AGENT_SDS_SOCKET (envoy: the sds-grpc cluster, default ${defaultSdsSocket}).`,
  ].join("\n");
}

/**
 * Parses `--generator`, `--locality` over the pod's environment (POD_IP or INSTANCE_IP, POD_NAME,
 * POD_NAMESPACE, DOMAIN_SUFFIX) and the agent's own settings (EDGEPILOT_AGENT_SOCKET, else EDGEPILOT_AGENT_PORT).
 * Each error names its variable or flag.
 */
export function parseBootstrapArgs(
  env: Record<string, string | undefined>,
  argv: readonly string[],
): BootstrapArgs {
  const errors: string[] = [];
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const m = /^--(generator|locality|socket|port|admin-port|output-certs|sds-socket)(?:=(.*))?$/.exec(
      argv[i] as string,
    );
    const value = m ? (m[2] ?? argv[++i]) : undefined;
    if (!m || value === undefined)
      errors.push(`${JSON.stringify(argv[i - (m ? 1 : 0)])}: unknown argument or missing value`);
    else flags.set(m[1] as string, value);
  }
  const generator = flags.get("generator");
  if (generator === undefined) errors.push("--generator is required: grpc or envoy");
  else if (generator !== "grpc" && generator !== "envoy")
    errors.push(`--generator=${JSON.stringify(generator)}: want grpc or envoy`);
  else if (generator === "grpc" && flags.has("admin-port"))
    errors.push("--admin-port: only for --generator envoy");
  else if (generator === "grpc" && flags.has("sds-socket"))
    errors.push("--sds-socket: only for --generator envoy (proxyless gRPC reads --output-certs)");
  else if (generator === "envoy" && flags.has("output-certs"))
    errors.push("--output-certs: only for --generator grpc (Envoy reads its certificates over SDS)");
  const need = (name: string, rule?: RegExp, what?: string): string => {
    const v = env[name] ?? "";
    if (v === "")
      errors.push(
        `${name} is not set (the pod's, through the downward API${name === "POD_IP" ? "; or INSTANCE_IP" : ""})`,
      );
    else if (rule && !rule.test(v)) errors.push(`${name}=${JSON.stringify(v)}: not ${what}`);
    return v;
  };
  // Istio's injector names it INSTANCE_IP; either is the pod's status.podIP.
  const podIp = need(
    env.POD_IP || !env.INSTANCE_IP ? "POD_IP" : "INSTANCE_IP",
    /^[0-9a-fA-F.:]+$/,
    "an IP address",
  );
  const podName = need("POD_NAME", /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, "a pod name");
  const namespace = need("POD_NAMESPACE", label, "a namespace name");
  const domainSuffix = env.DOMAIN_SUFFIX || "cluster.local";
  let locality: BootstrapInput["locality"];
  const loc = flags.get("locality");
  if (loc !== undefined) {
    const parts = loc.split("/");
    if (parts.length > 3) errors.push(`--locality=${JSON.stringify(loc)}: want region/zone/sub_zone`);
    else locality = { region: parts[0] ?? "", zone: parts[1] ?? "", subZone: parts[2] ?? "" };
  }
  const socket = flags.get("socket") ?? env.EDGEPILOT_AGENT_SOCKET;
  const port = flags.get("port") ?? env.EDGEPILOT_AGENT_PORT ?? "15011";
  if (!socket && !/^\d{1,5}$/.test(port))
    errors.push(`EDGEPILOT_AGENT_PORT=${JSON.stringify(port)}: not a port`);
  const serverUri = socket ? `unix:${socket}` : `127.0.0.1:${port}`;
  const envoy =
    generator === "envoy"
      ? parseEnvoyInput(env, flags.get("admin-port"), errors, flags.get("sds-socket"))
      : undefined;
  const certDir =
    generator === "grpc" ? flags.get("output-certs") || env.OUTPUT_CERTS || undefined : undefined;
  const labels = generator === "grpc" ? parsePodLabels(env, errors) : {};
  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    input: {
      generator: generator === "envoy" ? "envoy" : "grpc",
      podIp,
      podName,
      namespace,
      domainSuffix,
      serverUri,
      ...(locality && { locality }),
      ...(envoy && { envoy }),
      ...(certDir !== undefined && { certDir }),
      ...(Object.keys(labels).length > 0 && { labels }),
    },
  };
}

/** The bootstrap JSON (grpc-js-xds's GRPC_XDS_BOOTSTRAP file), as a plain object. */
export function grpcBootstrap(input: BootstrapInput): Record<string, unknown> {
  const ns = input.namespace;
  return {
    xds_servers: [
      {
        server_uri: input.serverUri,
        channel_creds: [{ type: "insecure" }],
        server_features: ["xds_v3"],
      },
    ],
    node: {
      id: `sidecar~${input.podIp}~${input.podName}.${ns}~${ns}.svc.${input.domainSuffix}`,
      // grpc-js-xds refuses a node without a locality: an empty one when none is given.
      locality: input.locality
        ? { region: input.locality.region, zone: input.locality.zone, sub_zone: input.locality.subZone }
        : {},
      metadata: {
        GENERATOR: "grpc",
        NAMESPACE: ns,
        INSTANCE_IPS: input.podIp,
        ...(input.labels && { LABELS: input.labels }),
      },
    },
    // As Istio's grpc bootstrap: the workload certificate from the agent's files, as provider `default`.
    ...(input.certDir !== undefined && {
      certificate_providers: {
        default: {
          plugin_name: "file_watcher",
          config: {
            certificate_file: joinPath(input.certDir, "cert-chain.pem"),
            private_key_file: joinPath(input.certDir, "key.pem"),
            ca_certificate_file: joinPath(input.certDir, "root-cert.pem"),
            refresh_interval: certRefreshInterval,
          },
        },
      },
    }),
    server_listener_resource_name_template: serverListenerNameTemplate,
  };
}

/** `dir/name` with one slash, as Go's path.Join joins them (no Node import: lib/ stays runtime-free). */
function joinPath(dir: string, name: string): string {
  return `${dir.replace(/\/+$/, "")}/${name}`;
}
