#!/usr/bin/env node
// A proxyless gRPC client of edgepilot: @grpc/grpc-js resolves `xds:///<host>:<port>` through
// @grpc/grpc-js-xds, which subscribes over ADS to the control plane's Listener, RouteConfiguration,
// Cluster and ClusterLoadAssignment, as a gRPC application in an Istio mesh does. It also starts the
// backend the quick start's EndpointSlice names (127.0.0.1:BACKEND_PORT), so its calls succeed.
// It stays connected until Ctrl-C, so `node bin/edgepilot.mjs proxy-status` can show it SYNCED.
//
//   node examples/proxyless-grpc/client.mjs [host:port]
//
// Environment: XDS_PORT (15010) and XDS_HOST (127.0.0.1) name the control plane's xDS port;
// BACKEND_PORT (50051) is where the backend listens; NODE_ID overrides the node id.
import * as grpc from "@grpc/grpc-js";
import * as grpcXds from "@grpc/grpc-js-xds";

const target = process.argv[2] ?? "reviews.default.svc.cluster.local:9080";
const xdsHost = process.env.XDS_HOST || "127.0.0.1";
const xdsPort = process.env.XDS_PORT || "15010";
const backendPort = Number(process.env.BACKEND_PORT || 50051);
// Istio's node id for a proxyless workload: sidecar~<pod IP>~<pod>.<namespace>~<namespace>.svc.<suffix>.
const nodeId = process.env.NODE_ID || "sidecar~127.0.0.1~example-client.default~default.svc.cluster.local";

// The method the backend serves: no request body, its name back (raw bytes, so no .proto is needed).
const hello = {
  path: "/edgepilot.example.Hello/Hello",
  requestStream: false,
  responseStream: false,
  requestSerialize: (b) => b,
  requestDeserialize: (b) => b,
  responseSerialize: (b) => b,
  responseDeserialize: (b) => b,
};

/** Starts the backend on 127.0.0.1:BACKEND_PORT; resolves once it is bound. */
function startBackend() {
  const server = new grpc.Server();
  server.addService({ Hello: hello }, { Hello: (_call, callback) => callback(null, Buffer.from("backend")) });
  return new Promise((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${backendPort}`, grpc.ServerCredentials.createInsecure(), (err) =>
      err ? reject(err) : resolve(server),
    ),
  );
}

// The xDS bootstrap a proxyless client reads (GRPC_XDS_BOOTSTRAP names a file; this passes it
// inline). GENERATOR=grpc asks edgepilot for proxyless gRPC resources rather than Envoy's.
process.env.GRPC_XDS_BOOTSTRAP_CONFIG = JSON.stringify({
  xds_servers: [
    {
      server_uri: `${xdsHost}:${xdsPort}`,
      channel_creds: [{ type: "insecure" }],
      server_features: ["xds_v3"],
    },
  ],
  node: {
    id: nodeId,
    locality: { region: "local", zone: "a" },
    metadata: { GENERATOR: "grpc", NAMESPACE: "default", CLUSTER_ID: "Kubernetes" },
  },
});
grpcXds.register();

const server = await startBackend();
const client = new grpc.Client(`xds:///${target}`, grpc.credentials.createInsecure());

/** One call; resolves with the backend's answer or the gRPC error's text. */
function call() {
  return new Promise((resolve) =>
    client.makeUnaryRequest(
      hello.path,
      hello.requestSerialize,
      hello.responseDeserialize,
      Buffer.alloc(0),
      new grpc.Metadata(),
      { deadline: Date.now() + 2000 },
      (err, value) => resolve(err ? `error: ${err.details || err.message}` : `ok: ${value.toString()}`),
    ),
  );
}

console.log(`node ${nodeId}`);
console.log(`xDS server ${xdsHost}:${xdsPort}, calling xds:///${target} (Ctrl-C to stop)`);
let last = "";
const timer = setInterval(async () => {
  const answer = await call();
  // One line per change of outcome, so the terminal shows when routing starts or stops working.
  if (answer !== last) console.log(`call xds:///${target}: ${answer}`);
  last = answer;
}, 1000);

const stop = () => {
  clearInterval(timer);
  client.close();
  server.forceShutdown();
  process.exit(0);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
