/**
 * Zero trust end to end, as a mesh runs it: `npm start`'s control plane (XDS_AUTH=jwt, its CA on)
 * and two pods, each with its own `edgepilot agent` (certificates from the control plane's CA,
 * rotated every few seconds, written as files; ADS on loopback). A real @grpc/grpc-js-xds XdsServer
 * (gRFC A36, RBAC on) in namespace `server` and a real xDS client in namespace `client` both go
 * through their agent, with the bootstrap `edgepilot agent bootstrap` writes (its file_watcher
 * provider reading the agent's files). Policies are POSTed as the relay sends them:
 * - STRICT: the mesh client's calls succeed and the server sees its SPIFFE ID; a plaintext client
 *   is refused;
 * - an AuthorizationPolicy DENY on the client's namespace: calls fail PERMISSION_DENIED within a
 *   second of the POST, and pass again once it is deleted;
 * - an ALLOW for one principal admits only that principal;
 * - calls running while both agents rotate their certificates: none fails.
 */
import "./enable-rbac.ts";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { XdsChannelCredentials, XdsServer, XdsServerCredentials } from "@grpc/grpc-js-xds";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningAgent, startAgent } from "../../../functions/node/agent-runtime.ts";
import { grpcBootstrap, parseBootstrapArgs } from "../../../lib/agent/bootstrap.ts";
import { parseAgentConfig } from "../../../lib/agent/config.ts";
import { claims, jwksOf, makeKeys, sign, type TestKeys } from "../../unit/auth/tokens.ts";
import { whoMethod } from "../support/backends.ts";
import { endpointSlice, event, pod, service } from "../support/kube.ts";
import { freePort, type RunningControlPlane, startControlPlane } from "../support/runtime.ts";
import { registerXdsPerChannel } from "../support/xds-client.ts";
import { who } from "./workloads.ts";

const BOOTSTRAP = "grpc.TEST_ONLY_DO_NOT_USE_IN_PROD.xds_bootstrap_config";
const TLS_MODE = { "security.istio.io/tlsMode": "istio" };
const spiffe = (ns: string, sa: string) => `spiffe://cluster.local/ns/${ns}/sa/${sa}`;
const DENIED = `error:${grpc.status.PERMISSION_DENIED}`;

/** A workload pod: its namespace, service account (= app), IP and labels. */
interface Workload {
  namespace: string;
  app: string;
  ip: string;
  labels: Record<string, string>;
}
const server: Workload = { namespace: "server", app: "greeter", ip: "127.0.0.1", labels: TLS_MODE };
const client: Workload = { namespace: "client", app: "sleep", ip: "127.0.0.9", labels: TLS_MODE };

/** A security.istio.io object as the relay posts it. */
function policy(kind: string, name: string, spec: unknown, resourceVersion = "1") {
  return {
    apiVersion: "security.istio.io/v1",
    kind,
    metadata: {
      name,
      namespace: server.namespace,
      resourceVersion,
      creationTimestamp: "2026-01-01T00:00:00Z",
    },
    spec,
  };
}

/** Calls until `want` answers (20 s at most): the answer and when it came; the last answer otherwise. */
async function callUntil(
  c: grpc.Client,
  want: (a: string) => boolean,
): Promise<{ answer: string; at: number }> {
  const deadline = Date.now() + 20_000;
  let answer = "";
  while (Date.now() < deadline) {
    answer = await who(c, 2000);
    if (want(answer)) return { answer, at: Date.now() };
    await new Promise((r) => setTimeout(r, 20));
  }
  return { answer, at: Number.NaN };
}

describe("zero trust through the agent: CA certificates, STRICT mTLS, AuthorizationPolicy, rotation", () => {
  let cp: RunningControlPlane;
  let dir: string;
  let keys: TestKeys;
  let grpcPort: number;
  const agents: RunningAgent[] = [];
  const clients: grpc.Client[] = [];
  let xdsServer: XdsServer;
  let mesh: grpc.Client;
  const lines: string[] = [];

  /** Starts `w`'s agent (its tokens, certificates and files under `dir`); its gRPC bootstrap. */
  async function agentFor(w: Workload): Promise<{ bootstrap: Record<string, unknown>; certDir: string }> {
    const home = join(dir, w.app);
    const t = Math.floor(Date.now() / 1000);
    const token = (aud: string) =>
      sign(
        keys,
        "ES256",
        claims({
          aud: [aud],
          iat: t,
          nbf: t - 5,
          exp: t + 3600,
          sub: `system:serviceaccount:${w.namespace}:${w.app}`,
          "kubernetes.io": { namespace: w.namespace, serviceaccount: { name: w.app, uid: `uid-${w.app}` } },
        }),
      );
    writeFileSync(`${home}-xds-token`, await token("edgepilot"));
    writeFileSync(`${home}-ca-token`, await token("istio-ca"));
    const env = {
      EDGEPILOT_AGENT_UPSTREAM: `http://127.0.0.1:${cp.xdsPort}`,
      EDGEPILOT_AGENT_TOKEN_FILE: `${home}-xds-token`,
      EDGEPILOT_CA_TOKEN_FILE: `${home}-ca-token`,
      POD_NAMESPACE: w.namespace,
      SERVICE_ACCOUNT: w.app,
      // Short-lived certificates: each agent renews several times while the tests run.
      SECRET_TTL: "6s",
      OUTPUT_CERTS: join(home, "certs"),
      EDGEPILOT_AGENT_SDS_SOCKET: join(home, "sds.sock"),
      EDGEPILOT_AGENT_PORT: "0",
      EDGEPILOT_AGENT_READY_PORT: "0",
    };
    const parsed = parseAgentConfig(env, []);
    if (parsed.ok !== true) throw new Error(JSON.stringify(parsed));
    const agent = await startAgent(parsed.config, { log: (l) => lines.push(`${w.app}: ${l}`) });
    agents.push(agent);
    const args = parseBootstrapArgs(
      {
        POD_IP: w.ip,
        POD_NAME: `${w.app}-1`,
        POD_NAMESPACE: w.namespace,
        ISTIO_METAJSON_LABELS: JSON.stringify({ app: w.app, ...w.labels }),
        OUTPUT_CERTS: env.OUTPUT_CERTS,
      },
      ["--generator=grpc", "--port", String(agent.port)],
    );
    if (!args.ok) throw new Error(args.errors.join("; "));
    const bootstrap = grpcBootstrap(args.input);
    // The files change every few seconds here: gRPC re-reads them each second instead of Istio's 15 minutes.
    const providers = bootstrap.certificate_providers as {
      default: { config: { refresh_interval: string } };
    };
    providers.default.config.refresh_interval = "1s";
    return { bootstrap, certDir: env.OUTPUT_CERTS };
  }

  beforeAll(async () => {
    keys = await makeKeys();
    dir = mkdtempSync(join(tmpdir(), "edgepilot-zero-trust-"));
    writeFileSync(join(dir, "jwks.json"), await jwksOf(keys));
    cp = await startControlPlane({
      XDS_AUTH: "jwt",
      XDS_JWT_ISSUER: claims().iss as string,
      XDS_JWT_AUDIENCE: "edgepilot",
      XDS_JWKS_FILE: join(dir, "jwks.json"),
    });
    grpcPort = await freePort();
    const podOf = (w: Workload) => {
      const p = pod(w.app, w.namespace, w.ip);
      return { ...p, metadata: { ...p.metadata, labels: { ...p.metadata.labels, ...w.labels } } };
    };
    const events = [
      event("ADDED", podOf(server)),
      event("ADDED", podOf(client)),
      event("ADDED", service(server.app, server.namespace, [{ name: "grpc", port: grpcPort }])),
      event(
        "ADDED",
        endpointSlice(`${server.app}-x`, server.app, server.namespace, { name: "grpc", port: grpcPort }, [
          { ip: server.ip, ready: true },
        ]),
      ),
      event("ADDED", policy("PeerAuthentication", "strict", { mtls: { mode: "STRICT" } })),
    ];
    expect((await cp.post(events)).status).toBe(200);
    registerXdsPerChannel();
    const s = await agentFor(server);
    const c = await agentFor(client);
    xdsServer = new XdsServer({ [BOOTSTRAP]: JSON.stringify(s.bootstrap) });
    xdsServer.addService(
      { Who: whoMethod },
      {
        Who: (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => {
          const auth = call.getAuthContext();
          cb(null, Buffer.from(auth.sslPeerCertificate?.subjectaltname ?? "plaintext"));
        },
      },
    );
    await new Promise<void>((resolve, reject) =>
      xdsServer.bindAsync(
        `0.0.0.0:${grpcPort}`,
        new XdsServerCredentials(grpc.ServerCredentials.createInsecure()),
        (err) => (err ? reject(err) : resolve()),
      ),
    );
    mesh = new grpc.Client(
      `xds:///${server.app}.${server.namespace}.svc.cluster.local:${grpcPort}`,
      new XdsChannelCredentials(grpc.credentials.createInsecure()),
      { [BOOTSTRAP]: JSON.stringify(c.bootstrap) },
    );
    clients.push(mesh);
  }, 60_000);

  afterAll(async () => {
    for (const c of clients) c.close();
    xdsServer?.forceShutdown();
    for (const a of agents) await a.stop();
    await cp?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const context = () => lines.slice(-30).join("\n");

  it("STRICT: the mesh client's calls succeed over mTLS and the server sees its SPIFFE ID", async () => {
    const { answer } = await callUntil(mesh, (a) => !a.startsWith("error:"));
    expect(answer, context()).toBe(`URI:${spiffe(client.namespace, client.app)}`);
  });

  it("STRICT: a plaintext client is refused", async () => {
    const plain = new grpc.Client(`127.0.0.1:${grpcPort}`, grpc.credentials.createInsecure());
    clients.push(plain);
    expect(await who(plain, 2000)).toBe(`error:${grpc.status.UNAVAILABLE}`);
  });

  it("a DENY on the client's namespace refuses its calls within a second of the POST; deleted, they pass again", async () => {
    const deny = policy("AuthorizationPolicy", "deny-client", {
      action: "DENY",
      rules: [{ from: [{ source: { namespaces: [client.namespace] } }] }],
    });
    const posted = Date.now();
    expect((await cp.post(event("ADDED", deny))).status).toBe(200);
    const refused = await callUntil(mesh, (a) => a === DENIED);
    expect(refused.answer, context()).toBe(DENIED);
    expect(refused.at - posted).toBeLessThan(1000);
    console.info(`policy POST ▶ first refused call: ${refused.at - posted} ms`);
    expect(
      (await cp.post(event("DELETED", { ...deny, metadata: { ...deny.metadata, resourceVersion: "2" } })))
        .status,
    ).toBe(200);
    const back = await callUntil(mesh, (a) => !a.startsWith("error:"));
    expect(back.answer).toBe(`URI:${spiffe(client.namespace, client.app)}`);
  });

  it("an ALLOW for one principal admits only it", async () => {
    const allow = (principal: string, rv: string) =>
      policy(
        "AuthorizationPolicy",
        "allow-one",
        { rules: [{ from: [{ source: { principals: [principal] } }] }] },
        rv,
      );
    expect(
      (await cp.post(event("ADDED", allow(`cluster.local/ns/${client.namespace}/sa/other`, "10")))).status,
    ).toBe(200);
    expect((await callUntil(mesh, (a) => a === DENIED)).answer, context()).toBe(DENIED);
    expect(
      (await cp.post(event("MODIFIED", allow(`cluster.local/ns/${client.namespace}/sa/${client.app}`, "11"))))
        .status,
    ).toBe(200);
    const admitted = await callUntil(mesh, (a) => !a.startsWith("error:"));
    expect(admitted.answer).toBe(`URI:${spiffe(client.namespace, client.app)}`);
  });

  it("calls running while both agents rotate their certificates: none fails", async () => {
    const files = [server, client].map((w) => join(dir, w.app, "certs", "cert-chain.pem"));
    const before = files.map((f) => readFileSync(f, "utf8"));
    const answers: string[] = [];
    // SECRET_TTL 6s, renewed at half life: 8 s of calls see each agent rotate at least once.
    const until = Date.now() + 8000;
    while (Date.now() < until) {
      answers.push(await who(mesh, 2000));
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(files.map((f) => readFileSync(f, "utf8") === before[files.indexOf(f)])).toEqual([false, false]);
    expect(
      answers.filter((a) => a.startsWith("error:")),
      context(),
    ).toEqual([]);
    expect(answers.length).toBeGreaterThan(50);
  });
});
