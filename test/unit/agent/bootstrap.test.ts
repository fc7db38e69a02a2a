import { validateBootstrapConfig } from "@grpc/grpc-js-xds/build/src/xds-bootstrap.js";
import { describe, expect, it } from "vitest";
import { grpcBootstrap, parseBootstrapArgs } from "../../../lib/agent/bootstrap.ts";

const pod = { POD_IP: "10.1.0.9", POD_NAME: "app-7d9", POD_NAMESPACE: "shop" };

describe("agent bootstrap", () => {
  it("builds Istio's node for a proxyless gRPC client, pointing at the agent's socket", () => {
    const args = parseBootstrapArgs({ ...pod, EDGEPILOT_AGENT_SOCKET: "/var/run/xds.sock" }, [
      "--generator",
      "grpc",
      "--locality=r1/z1",
    ]);
    expect(args.ok).toBe(true);
    if (!args.ok) return;
    expect(grpcBootstrap(args.input)).toEqual({
      xds_servers: [
        {
          server_uri: "unix:/var/run/xds.sock",
          channel_creds: [{ type: "insecure" }],
          server_features: ["xds_v3"],
        },
      ],
      node: {
        id: "sidecar~10.1.0.9~app-7d9.shop~shop.svc.cluster.local",
        locality: { region: "r1", zone: "z1", sub_zone: "" },
        metadata: { GENERATOR: "grpc", NAMESPACE: "shop", INSTANCE_IPS: "10.1.0.9" },
      },
      server_listener_resource_name_template: "xds.istio.io/grpc/lds/inbound/%s",
    });
  });

  it("names the agent's certificate files as Istio's grpc bootstrap does, which grpc-js-xds accepts", () => {
    for (const [env, argv] of [
      [{ ...pod, OUTPUT_CERTS: "/var/lib/istio/data/" }, ["--generator=grpc", "--locality=r1/z1"]],
      [pod, ["--generator=grpc", "--locality=r1/z1", "--output-certs", "/var/lib/istio/data"]],
    ] as const) {
      const args = parseBootstrapArgs(env, argv);
      if (!args.ok) throw new Error(args.errors.join("; "));
      const bootstrap = grpcBootstrap(args.input);
      expect(bootstrap.certificate_providers).toEqual({
        default: {
          plugin_name: "file_watcher",
          config: {
            certificate_file: "/var/lib/istio/data/cert-chain.pem",
            private_key_file: "/var/lib/istio/data/key.pem",
            ca_certificate_file: "/var/lib/istio/data/root-cert.pem",
            refresh_interval: "900s",
          },
        },
      });
      const info = validateBootstrapConfig(bootstrap);
      expect(info.serverListenerResourceNameTemplate).toBe("xds.istio.io/grpc/lds/inbound/%s");
      expect(info.certificateProviders.default).toEqual({
        pluginName: "file_watcher",
        config: {
          certificateFile: "/var/lib/istio/data/cert-chain.pem",
          privateKeyFile: "/var/lib/istio/data/key.pem",
          caCertificateFile: "/var/lib/istio/data/root-cert.pem",
          refreshIntervalMs: 900_000,
        },
      });
    }
    const without = parseBootstrapArgs(pod, ["--generator=grpc"]);
    expect(without.ok && grpcBootstrap(without.input).certificate_providers).toBeUndefined();
  });

  it("without --locality: an empty locality (grpc-js-xds refuses a node without one); the pod's labels as LABELS", () => {
    const labels = { app: "reviews", "security.istio.io/tlsMode": "istio" };
    const args = parseBootstrapArgs({ ...pod, ISTIO_METAJSON_LABELS: JSON.stringify(labels) }, [
      "--generator=grpc",
    ]);
    if (!args.ok) throw new Error(args.errors.join("; "));
    const bootstrap = grpcBootstrap(args.input);
    const info = validateBootstrapConfig(bootstrap);
    expect(info.node.locality).toEqual({});
    expect((bootstrap.node as { metadata: unknown }).metadata).toMatchObject({ LABELS: labels });
    expect(info.node.metadata?.fields?.LABELS?.structValue?.fields?.app?.stringValue).toBe("reviews");
    expect(parseBootstrapArgs({ ...pod, ISTIO_METAJSON_LABELS: "[1]" }, ["--generator=grpc"])).toEqual({
      ok: false,
      errors: ["ISTIO_METAJSON_LABELS: not a JSON object of strings (the pod's labels)"],
    });
  });

  it("points at the loopback port without a socket, with the domain suffix given", () => {
    const args = parseBootstrapArgs({ ...pod, DOMAIN_SUFFIX: "corp.local" }, [
      "--generator=grpc",
      "--port",
      "16000",
    ]);
    expect(args.ok && grpcBootstrap(args.input)).toMatchObject({
      xds_servers: [{ server_uri: "127.0.0.1:16000" }],
      node: { id: "sidecar~10.1.0.9~app-7d9.shop~shop.svc.corp.local" },
    });
  });

  it("takes the pod IP as Istio's injector names it (INSTANCE_IP)", () => {
    const { POD_IP: _, ...rest } = pod;
    const args = parseBootstrapArgs({ ...rest, INSTANCE_IP: "10.1.0.7" }, ["--generator=grpc"]);
    expect(args.ok && grpcBootstrap(args.input)).toMatchObject({
      node: { id: "sidecar~10.1.0.7~app-7d9.shop~shop.svc.cluster.local" },
    });
  });

  it.each([
    { what: "no generator", env: pod, argv: [], error: /^--generator is required/ },
    { what: "another generator", env: pod, argv: ["--generator", "istiod"], error: /want grpc or envoy/ },
    {
      what: "no pod IP",
      env: { ...pod, POD_IP: "" },
      argv: ["--generator=grpc"],
      error: /^POD_IP is not set/,
    },
    {
      what: "a bad namespace",
      env: { ...pod, POD_NAMESPACE: "Shop" },
      argv: ["--generator=grpc"],
      error: /^POD_NAMESPACE="Shop": not a namespace/,
    },
    {
      what: "--sds-socket for gRPC",
      env: pod,
      argv: ["--generator=grpc", "--sds-socket=/s"],
      error: /^--sds-socket: only for --generator envoy/,
    },
    {
      what: "--output-certs for Envoy",
      env: pod,
      argv: ["--generator=envoy", "--output-certs=/d"],
      error: /^--output-certs: only for --generator grpc/,
    },
    {
      what: "an unknown flag",
      env: pod,
      argv: ["--generator=grpc", "--x"],
      error: /^"--x": unknown argument/,
    },
  ])("refuses $what, naming it", ({ env, argv, error }) => {
    const args = parseBootstrapArgs(env, argv);
    expect(args.ok).toBe(false);
    expect(!args.ok && args.errors[0]).toMatch(error);
  });
});
