/**
 * The agent's workload identity on Node, assembled from its settings (lib/agent/cert-config.ts):
 * the CA client (its address, protocol, roots and token), the certificate driver and the SDS
 * socket. The CA's roots default to the upstream's bundle when the CA is the upstream, and its
 * token to the upstream's token file, as pilot-agent reuses its xDS credentials for istiod's CA.
 */
import type { AgentConfig } from "../../lib/agent/config.ts";
import { logSafe } from "../../lib/log-safe.ts";
import type { BackoffOptions } from "../../lib/relay/backoff.ts";
import { createCaClient } from "./agent-ca-client.ts";
import { startWorkloadCerts, type WorkloadCerts } from "./agent-certs.ts";
import { serveSds } from "./agent-sds.ts";
import { upstreamTls } from "./agent-tls.ts";
import { type TokenFile, watchTokenFile } from "./agent-token.ts";

/** A running workload identity: its certificates and the SDS server. */
export interface AgentIdentity {
  certs: WorkloadCerts;
  stop(): Promise<void>;
}

/** What the identity reuses from the agent, and tunables a test may shorten. */
export interface AgentIdentityDeps {
  log: (line: string) => void;
  /** The upstream's token file watcher, reused when the CA's token file is the same file. */
  upstreamToken: TokenFile | undefined;
  readMaxBytes: number;
  backoff?: BackoffOptions;
}

/** Starts the certificates and SDS of `config.certs`; undefined when certificates are off. */
export async function startAgentIdentity(
  config: AgentConfig,
  deps: AgentIdentityDeps,
): Promise<AgentIdentity | undefined> {
  const c = config.certs;
  if (!c) return undefined;
  const { log } = deps;
  const sameToken = c.tokenFile === config.tokenFile;
  const token: TokenFile | undefined = sameToken
    ? deps.upstreamToken
    : c.tokenFile !== undefined
      ? watchTokenFile(c.tokenFile, () => undefined, log)
      : undefined;
  const caIsUpstream = c.caAddr === config.upstream;
  const roots =
    c.caRootFile !== undefined
      ? { file: c.caRootFile, variable: "EDGEPILOT_CA_ROOT_CA" }
      : caIsUpstream
        ? { file: config.caFile, variable: "EDGEPILOT_AGENT_CA_FILE" }
        : { file: undefined, variable: "EDGEPILOT_CA_ROOT_CA" };
  const tls = upstreamTls(roots.file, log, roots.variable);
  const ca = createCaClient({
    addr: c.caAddr,
    protocol: c.caProtocol,
    http: c.caHttp,
    token: () => token?.current(),
    tls: () => tls.options(),
    roots,
  });
  const certs = startWorkloadCerts(c, { ca, log, ...(deps.backoff && { backoff: deps.backoff }) });
  let sds: Awaited<ReturnType<typeof serveSds>>;
  try {
    sds = await serveSds(c.sdsSocket, certs, { log, readMaxBytes: deps.readMaxBytes });
  } catch (e) {
    certs.stop();
    if (!sameToken) token?.close();
    throw e;
  }
  log(
    `agent: workload certificates for ${c.identity} from ${c.caAddr} (${c.caProtocol}), token ` +
      `${c.tokenFile === undefined ? "none" : logSafe(c.tokenFile)}; SDS on unix:${logSafe(c.sdsSocket)}` +
      (c.outputDir === undefined ? "" : `; files in OUTPUT_CERTS=${logSafe(c.outputDir)}`),
  );
  return {
    certs,
    async stop() {
      certs.stop();
      if (!sameToken) token?.close();
      await sds.close();
    },
  };
}
