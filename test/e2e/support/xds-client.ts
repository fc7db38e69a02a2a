/** A real proxyless gRPC client: @grpc/grpc-js with @grpc/grpc-js-xds resolving `xds:///` targets. */
import * as grpc from "@grpc/grpc-js";
import * as grpcXds from "@grpc/grpc-js-xds";
import { whoMethod } from "./backends.ts";

let registered = false;

/**
 * The bootstrap (JSON) of a proxyless client with node `nodeId` talking to our ADS server;
 * `metadata` is added to the node's (NETWORK, REQUESTED_NETWORK_VIEW, ...).
 */
export function xdsBootstrap(xdsPort: number, nodeId: string, metadata: Record<string, string> = {}): string {
  return JSON.stringify({
    xds_servers: [
      {
        server_uri: `127.0.0.1:${xdsPort}`,
        channel_creds: [{ type: "insecure" }],
        server_features: ["xds_v3"],
      },
    ],
    node: {
      id: nodeId,
      locality: { region: "e2e", zone: "a", sub_zone: "" },
      metadata: { GENERATOR: "grpc", ...metadata },
    },
  });
}

/** Points grpc-js-xds at our ADS server. Call once per process, before the first xds:/// channel. */
export function bootstrapXds(xdsPort: number, nodeId: string): void {
  if (registered) throw new Error("grpc-js-xds reads its bootstrap once per process");
  process.env.GRPC_XDS_BOOTSTRAP_CONFIG = xdsBootstrap(xdsPort, nodeId);
  grpcXds.register();
  registered = true;
}

/**
 * Registers the xds:/// resolver without a process-wide bootstrap: each channel then names its own
 * (whoClient's `bootstrap`), so one process holds proxies of several nodes (namespaces).
 */
export function registerXdsPerChannel(): void {
  if (registered) throw new Error("grpc-js-xds is already registered in this process");
  grpcXds.register();
  registered = true;
}

export interface WhoClient {
  /** Calls Who (with `headers` as request metadata); resolves with the backend's name or rejects with the gRPC error. */
  who(deadlineMs?: number, headers?: Record<string, string>): Promise<string>;
  close(): void;
}

/**
 * A client for `xds:///<host>:<port>`; with `bootstrap` (xdsBootstrap), the channel has its own xDS
 * client and node (grpc-js-xds's per-channel bootstrap option, meant for tests).
 */
export function whoClient(target: string, bootstrap?: string): WhoClient {
  const options = bootstrap ? { "grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config": bootstrap } : {};
  const client = new grpc.Client(target, grpc.credentials.createInsecure(), options);
  return {
    who(deadlineMs = 2000, headers = {}) {
      const metadata = new grpc.Metadata();
      for (const [k, v] of Object.entries(headers)) metadata.set(k, v);
      return new Promise((resolve, reject) => {
        client.makeUnaryRequest(
          whoMethod.path,
          whoMethod.requestSerialize,
          whoMethod.responseDeserialize,
          Buffer.alloc(0),
          metadata,
          { deadline: Date.now() + deadlineMs },
          (err, value) => (err ? reject(err) : resolve((value as Buffer).toString())),
        );
      });
    },
    close: () => client.close(),
  };
}
