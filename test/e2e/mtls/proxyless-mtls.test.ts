/**
 * Proxyless gRPC mTLS end to end: `npm start`'s control plane serves a real @grpc/grpc-js-xds
 * XdsServer its server Listener and a real xDS client its Clusters, both holding certificates lib/ca
 * signed (read by the bootstrap's `file_watcher` provider `default`). A workload labelled
 * `security.istio.io/tlsMode: istio` under the default PERMISSIVE is served STRICT (grpcgen: its
 * clients use mTLS), and its clients get auto-mTLS: the call succeeds, the server sees the client's
 * SPIFFE ID, and a plaintext client is refused. A workload a STRICT PeerAuthentication selects is
 * served mTLS to clients a DestinationRule's ISTIO_MUTUAL sends; an unlabelled workload under
 * PERMISSIVE stays plaintext.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { XdsChannelCredentials, XdsServer, XdsServerCredentials } from "@grpc/grpc-js-xds";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { destinationRule } from "../../unit/ingest/support/istio.ts";
import { whoMethod } from "../support/backends.ts";
import { endpointSlice, event, pod, service } from "../support/kube.ts";
import { freePort, type RunningControlPlane, startControlPlane } from "../support/runtime.ts";
import { registerXdsPerChannel } from "../support/xds-client.ts";
import {
  type GrpcNode,
  grpcBootstrap,
  meshRoot,
  type WorkloadFiles,
  who,
  workloadCertificate,
} from "./workloads.ts";

const NS = "default";
const BOOTSTRAP = "grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config";
const TLS_MODE = { "security.istio.io/tlsMode": "istio" };
const spiffe = (sa: string) => `spiffe://cluster.local/ns/${NS}/sa/${sa}`;

/** What the server answers: the client's URI SAN over mTLS, "plaintext" without TLS. */
function peerOf(call: grpc.ServerUnaryCall<Buffer, Buffer>): string {
  const auth = call.getAuthContext();
  return auth.sslPeerCertificate?.subjectaltname ?? auth.transportSecurityType ?? "plaintext";
}

/** Starts an XdsServer for `node` on `0.0.0.0:<port>`; resolves once it serves its Listener. */
async function startServer(xdsPort: number, node: GrpcNode, port: number, files: WorkloadFiles) {
  const server = new XdsServer({ [BOOTSTRAP]: grpcBootstrap(xdsPort, node, files) });
  server.addService(
    { Who: whoMethod },
    {
      Who: (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) =>
        cb(null, Buffer.from(peerOf(call))),
    },
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${node.pod}: no server Listener in 20s`)), 20_000);
    server.bindAsync(
      `0.0.0.0:${port}`,
      new XdsServerCredentials(grpc.ServerCredentials.createInsecure()),
      (err) => {
        clearTimeout(timer);
        if (err) reject(err);
        else resolve();
      },
    );
  });
  return server;
}

/** Calls until `want` answers (15 s at most); the last answer otherwise. */
async function callUntil(client: grpc.Client, want: (a: string) => boolean): Promise<string> {
  const deadline = Date.now() + 15_000;
  let last = "";
  while (Date.now() < deadline) {
    last = await who(client);
    if (want(last)) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  return last;
}

/** A pod of `name` at `ip` with `labels` beside app and version (its service account is `name`). */
function labelledPod(name: string, ip: string, labels: Record<string, string>) {
  const p = pod(name, NS, ip);
  return { ...p, metadata: { ...p.metadata, labels: { ...p.metadata.labels, ...labels } } };
}

describe("proxyless gRPC mTLS (grpcgen server listeners, auto-mTLS clients, lib/ca certificates)", () => {
  let cp: RunningControlPlane;
  let dir: string;
  const servers: XdsServer[] = [];
  const clients: grpc.Client[] = [];
  let strictPort: number;
  let plainPort: number;
  let policyPort: number;
  let mesh: (host: string, port: number) => grpc.Client;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "edgepilot-mtls-"));
    const root = await meshRoot();
    const serverFiles = await workloadCertificate(root, spiffe("greeter"), join(dir, "greeter"));
    const plainFiles = await workloadCertificate(root, spiffe("plain"), join(dir, "plain"));
    const policyFiles = await workloadCertificate(root, spiffe("strict"), join(dir, "strict"));
    const clientFiles = await workloadCertificate(root, spiffe("sleep"), join(dir, "sleep"));
    strictPort = await freePort();
    plainPort = await freePort();
    policyPort = await freePort();
    cp = await startControlPlane();
    const events = [
      event("ADDED", {
        apiVersion: "security.istio.io/v1",
        kind: "PeerAuthentication",
        metadata: { name: "strict-strict", namespace: NS, resourceVersion: "1" },
        spec: { selector: { matchLabels: { app: "strict" } }, mtls: { mode: "STRICT" } },
      }),
      event("ADDED", labelledPod("greeter", "127.0.0.1", TLS_MODE)),
      event("ADDED", labelledPod("plain", "127.0.0.2", {})),
      event("ADDED", labelledPod("strict", "127.0.0.3", {})),
      event("ADDED", service("strict", NS, [{ name: "grpc", port: policyPort }])),
      event(
        "ADDED",
        endpointSlice("strict-x", "strict", NS, { name: "grpc", port: policyPort }, [
          { ip: "127.0.0.3", ready: true },
        ]),
      ),
      event(
        "ADDED",
        destinationRule(`strict.${NS}.svc.cluster.local`, [], {
          spec: { trafficPolicy: { tls: { mode: "ISTIO_MUTUAL" } } },
        }),
      ),
      event("ADDED", service("greeter", NS, [{ name: "grpc", port: strictPort }])),
      event("ADDED", service("plain", NS, [{ name: "grpc", port: plainPort }])),
      event(
        "ADDED",
        endpointSlice("greeter-x", "greeter", NS, { name: "grpc", port: strictPort }, [
          { ip: "127.0.0.1", ready: true },
        ]),
      ),
      event(
        "ADDED",
        endpointSlice("plain-x", "plain", NS, { name: "grpc", port: plainPort }, [
          { ip: "127.0.0.2", ready: true },
        ]),
      ),
    ];
    expect((await cp.post(events)).status).toBe(200);
    registerXdsPerChannel();
    const node = (pod: string, ip: string, labels: Record<string, string>): GrpcNode => ({
      ip,
      pod,
      namespace: NS,
      labels,
    });
    servers.push(
      await startServer(
        cp.xdsPort,
        node("greeter-1", "127.0.0.1", { app: "greeter", ...TLS_MODE }),
        strictPort,
        serverFiles,
      ),
      await startServer(cp.xdsPort, node("plain-1", "127.0.0.2", { app: "plain" }), plainPort, plainFiles),
      await startServer(
        cp.xdsPort,
        node("strict-1", "127.0.0.3", { app: "strict" }),
        policyPort,
        policyFiles,
      ),
    );
    const clientBootstrap = grpcBootstrap(
      cp.xdsPort,
      node("sleep-1", "127.0.0.9", { app: "sleep" }),
      clientFiles,
    );
    mesh = (host, port) => {
      const c = new grpc.Client(
        `xds:///${host}.${NS}.svc.cluster.local:${port}`,
        new XdsChannelCredentials(grpc.credentials.createInsecure()),
        { [BOOTSTRAP]: clientBootstrap },
      );
      clients.push(c);
      return c;
    };
  }, 60_000);

  afterAll(async () => {
    for (const c of clients) c.close();
    for (const s of servers) s.forceShutdown();
    await cp?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const direct = (port: number) => {
    const c = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    clients.push(c);
    return c;
  };

  it("STRICT: the mesh client's calls succeed over mTLS and the server sees its SPIFFE ID", async () => {
    expect(await callUntil(mesh("greeter", strictPort), (a) => !a.startsWith("error:"))).toBe(
      `URI:${spiffe("sleep")}`,
    );
  });

  it("STRICT: a plaintext client is refused", async () => {
    expect(await who(direct(strictPort), 2000)).toBe(`error:${grpc.status.UNAVAILABLE}`);
  });

  it("STRICT by PeerAuthentication: an ISTIO_MUTUAL client succeeds as itself, a plaintext one is refused", async () => {
    expect(await callUntil(mesh("strict", policyPort), (a) => !a.startsWith("error:"))).toBe(
      `URI:${spiffe("sleep")}`,
    );
    expect(await who(direct(policyPort), 2000)).toBe(`error:${grpc.status.UNAVAILABLE}`);
  });

  it("PERMISSIVE without tlsMode: plaintext works, for a plain client and the mesh client alike", async () => {
    expect(await callUntil(direct(plainPort), (a) => !a.startsWith("error:"))).toBe("plaintext");
    expect(await callUntil(mesh("plain", plainPort), (a) => !a.startsWith("error:"))).toBe("plaintext");
  });
});
