/**
 * `edgepilot agent bootstrap --generator envoy`: the output parses as Envoy's v3 Bootstrap (strict
 * proto3 JSON: an unknown field or a wrong type fails), passes the protoc-gen-validate rules Envoy
 * enforces at load, and carries Istio's node and the agent's address (socket or loopback port).
 */
import { createRegistry, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { type BootstrapInput, parseBootstrapArgs } from "../../../lib/agent/bootstrap.ts";
import { type EnvoyNodeInput, envoyBootstrap } from "../../../lib/agent/envoy-bootstrap.ts";
import { type Bootstrap, BootstrapSchema } from "../../../lib/gen/envoy/config/bootstrap/v3/bootstrap_pb.ts";
import {
  ApiConfigSource_ApiType,
  ApiVersion,
} from "../../../lib/gen/envoy/config/core/v3/config_source_pb.ts";
import { HttpProtocolOptionsSchema } from "../../../lib/gen/envoy/extensions/upstreams/http/v3/http_protocol_options_pb.ts";
import { pgvViolations } from "../../support/pgv/index.ts";

const registry = createRegistry(HttpProtocolOptionsSchema);
const pod = { POD_IP: "10.1.0.9", POD_NAME: "app-7d9", POD_NAMESPACE: "shop" };

/** The bootstrap for `env` and `argv` (with --generator envoy), parsed as Envoy's Bootstrap and checked. */
function envoy(
  env: Record<string, string>,
  argv: string[] = [],
): { json: Record<string, unknown>; msg: Bootstrap } {
  const args = parseBootstrapArgs({ ...pod, ...env }, ["--generator", "envoy", ...argv]);
  if (!args.ok) throw new Error(args.errors.join("\n"));
  const json = envoyBootstrap(args.input as BootstrapInput & { envoy: EnvoyNodeInput });
  const msg = fromJson(BootstrapSchema, JSON.parse(JSON.stringify(json)) as JsonValue, { registry });
  expect(pgvViolations(BootstrapSchema, msg)).toEqual([]);
  return { json, msg };
}

describe("agent bootstrap for Envoy", () => {
  it("is a valid Bootstrap: Istio's node, ADS over the agent's Unix socket, admin on loopback", () => {
    const { msg } = envoy(
      {
        EDGEPILOT_AGENT_SOCKET: "/etc/edgepilot/agent.sock",
        ISTIO_META_WORKLOAD_NAME: "app",
        ISTIO_META_CLUSTER_ID: "Kubernetes",
        ISTIO_METAJSON_LABELS: '{"app":"reviews","version":"v1"}',
        SERVICE_ACCOUNT: "reviews",
      },
      ["--locality", "eu-west1/eu-west1-b"],
    );
    const node = msg.node;
    expect(node?.id).toBe("sidecar~10.1.0.9~app-7d9.shop~shop.svc.cluster.local");
    expect(node?.cluster).toBe("reviews.shop");
    expect(node?.locality).toMatchObject({ region: "eu-west1", zone: "eu-west1-b", subZone: "" });
    expect(node?.metadata).toEqual({
      WORKLOAD_NAME: "app",
      CLUSTER_ID: "Kubernetes",
      NAMESPACE: "shop",
      INSTANCE_IPS: "10.1.0.9",
      NAME: "app-7d9",
      LABELS: { app: "reviews", version: "v1" },
      SERVICE_ACCOUNT: "reviews",
    });
    const ads = msg.dynamicResources?.adsConfig;
    expect(ads).toMatchObject({
      apiType: ApiConfigSource_ApiType.GRPC,
      transportApiVersion: ApiVersion.V3,
      setNodeOnFirstMessageOnly: true,
    });
    expect(ads?.grpcServices[0]?.targetSpecifier).toMatchObject({
      case: "envoyGrpc",
      value: { clusterName: "xds-grpc" },
    });
    for (const c of [msg.dynamicResources?.ldsConfig, msg.dynamicResources?.cdsConfig])
      expect(c?.configSourceSpecifier.case).toBe("ads");
    const cluster = msg.staticResources?.clusters[0];
    expect(cluster?.name).toBe("xds-grpc");
    const address = cluster?.loadAssignment?.endpoints[0]?.lbEndpoints[0]?.hostIdentifier;
    expect(address).toMatchObject({
      case: "endpoint",
      value: { address: { address: { case: "pipe", value: { path: "/etc/edgepilot/agent.sock" } } } },
    });
    expect(Object.keys(cluster?.typedExtensionProtocolOptions ?? {})).toEqual([
      "envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
    ]);
    expect(msg.admin?.address?.address).toMatchObject({
      case: "socketAddress",
      value: { address: "127.0.0.1", portSpecifier: { case: "portValue", value: 15000 } },
    });
  });

  it("points at the loopback port without a socket; Istio's default cluster; an IPv6 pod's admin on ::1", () => {
    const { msg, json } = envoy({ POD_IP: "fd00::9", EDGEPILOT_AGENT_PORT: "16000" }, ["--admin-port=16001"]);
    expect(msg.node?.cluster).toBe("istio-proxy.shop");
    expect(msg.node?.locality).toBeUndefined();
    expect(JSON.stringify(json)).toContain('"socket_address":{"address":"127.0.0.1","port_value":16000}');
    expect(msg.admin?.address?.address).toMatchObject({
      value: { address: "::1", portSpecifier: { value: 16001 } },
    });
  });

  it("has Istio's sds-grpc static cluster on the agent's SDS socket (Istio's path unless set)", () => {
    const sds = (json: Record<string, unknown>) =>
      (json.static_resources as { clusters: { name: string }[] }).clusters.find((c) => c.name === "sds-grpc");
    // Istio's tools/packaging/common/envoy_bootstrap.json, field for field.
    expect(sds(envoy({}).json)).toEqual({
      name: "sds-grpc",
      alt_stat_name: "sds-grpc;",
      type: "STATIC",
      typed_extension_protocol_options: {
        "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
          "@type": "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
          explicit_http_config: { http2_protocol_options: {} },
        },
      },
      connect_timeout: "1s",
      lb_policy: "ROUND_ROBIN",
      load_assignment: {
        cluster_name: "sds-grpc",
        endpoints: [
          {
            lb_endpoints: [
              { endpoint: { address: { pipe: { path: "./var/run/secrets/workload-spiffe-uds/socket" } } } },
            ],
          },
        ],
      },
    });
    const pipe = (json: Record<string, unknown>) => JSON.stringify(sds(json)).match(/"path":"([^"]*)"/)?.[1];
    expect(pipe(envoy({ EDGEPILOT_AGENT_SDS_SOCKET: "/run/sds.sock" }).json)).toBe("/run/sds.sock");
    expect(pipe(envoy({ EDGEPILOT_AGENT_SDS_SOCKET: "/run/sds.sock" }, ["--sds-socket", "/x/s"]).json)).toBe(
      "/x/s",
    );
  });

  it("names the cluster after the workload when there is no app label", () => {
    expect(envoy({ ISTIO_META_WORKLOAD_NAME: "ratings-v2" }).msg.node?.cluster).toBe("ratings-v2.shop");
  });

  it.each([
    {
      what: "bad labels",
      env: { ISTIO_METAJSON_LABELS: "[1]" },
      argv: [],
      error: /^ISTIO_METAJSON_LABELS: not a JSON object/,
    },
    {
      what: "a bad admin port",
      env: {},
      argv: ["--admin-port", "0"],
      error: /^--admin-port="0": not a port/,
    },
    {
      what: "a bad metadata key",
      env: { "ISTIO_META_A B": "x" },
      argv: [],
      error: /ISTIO_META_A B.*not a metadata key/,
    },
  ])("refuses $what, naming it", ({ env, argv, error }) => {
    const args = parseBootstrapArgs({ ...pod, ...env }, ["--generator=envoy", ...argv]);
    expect(args.ok).toBe(false);
    expect(!args.ok && args.errors[0]).toMatch(error);
  });

  it("keeps --admin-port to Envoy", () => {
    const args = parseBootstrapArgs(pod, ["--generator=grpc", "--admin-port=15000"]);
    expect(!args.ok && args.errors[0]).toMatch(/--admin-port: only for --generator envoy/);
  });
});
