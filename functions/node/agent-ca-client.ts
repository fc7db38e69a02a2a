/**
 * The agent's client of istio.v1.auth.IstioCertificateService/CreateCertificate, as pilot-agent's
 * CA client calls istiod: the CSR with the validity asked for (SECRET_TTL, in seconds) and the
 * service-account token as `authorization: Bearer`. Over gRPC (istiod, istio-csr, a Node XDS_PORT)
 * or Connect (the Worker, Lambda URLs), HTTP/2 (h2c for http://, TLS with the configured roots for
 * https://), or HTTP/1.1 for Connect when the upstream is spoken to so. Each call opens its own connection: a certificate is asked for twice a day, and a CA
 * that moved or rotated its roots is met afresh.
 */

import { Agent as HttpAgent } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { createConnectTransport, createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import type { CaProtocol } from "../../lib/agent/cert-config.ts";
import type { UpstreamHttp } from "../../lib/agent/transport.ts";
import { IstioCertificateService } from "../../lib/gen/istio/v1/auth/ca_pb.ts";
import { describeConnectError } from "./agent-tls.ts";

/** Where the CA is and how the agent proves who it is. */
export interface CaClientOptions {
  /** `http://host:port` or `https://host:port`. */
  addr: string;
  protocol: CaProtocol;
  /** Connect's HTTP version (the upstream's); gRPC is always HTTP/2. */
  http?: UpstreamHttp;
  /** The token now (read at every call), or undefined to send none. */
  token: () => string | undefined;
  /** TLS options of an https:// CA: the roots it must chain to, read at every call. */
  tls: () => { ca?: string };
  /** The roots' file and the variable that named it, said when the CA's certificate is not trusted. */
  roots: { file: string | undefined; variable: string };
  /** A call without an answer this long fails (default 30 s). */
  timeoutMs?: number;
}

/** The chain the CA answered (leaf first), or why there is none, said for an operator. */
export type CaCallResult = { ok: true; certChain: string[] } | { ok: false; message: string };

/** Signs CSRs at the CA. */
export interface CaClient {
  createCertificate(csrPem: string, validitySeconds: number): Promise<CaCallResult>;
}

/** A CA client over `options.protocol`; it never throws: failures are results. */
export function createCaClient(options: CaClientOptions): CaClient {
  const timeoutMs = options.timeoutMs ?? 30_000;
  return {
    async createCertificate(csrPem, validitySeconds) {
      const tls = options.tls();
      const h1 = options.protocol === "connect" && options.http === "1.1";
      const session = h1 ? undefined : new Http2SessionManager(options.addr, undefined, tls);
      const agent = h1
        ? options.addr.startsWith("https:")
          ? new HttpsAgent(tls)
          : new HttpAgent()
        : undefined;
      const transport = session
        ? (options.protocol === "grpc" ? createGrpcTransport : createConnectTransport)({
            baseUrl: options.addr,
            httpVersion: "2",
            sessionManager: session,
          })
        : createConnectTransport({ baseUrl: options.addr, httpVersion: "1.1", nodeOptions: { agent } });
      const client = createClient(IstioCertificateService, transport);
      const token = options.token();
      try {
        const res = await client.createCertificate(
          { csr: csrPem, validityDuration: BigInt(validitySeconds) },
          {
            timeoutMs,
            headers: (token === undefined ? {} : { authorization: `Bearer ${token}` }) as Record<
              string,
              string
            >,
          },
        );
        return { ok: true, certChain: res.certChain };
      } catch (e) {
        const err = ConnectError.from(e);
        const cause = err.cause instanceof Error ? err.cause : undefined;
        const said = cause
          ? describeConnectError(cause, options.roots.file, options.roots.variable)
          : err.rawMessage;
        const tokenHint =
          err.code === Code.Unauthenticated && token === undefined
            ? " (no token was sent: set EDGEPILOT_CA_TOKEN_FILE)"
            : "";
        return {
          ok: false,
          message: `CreateCertificate at ${options.addr} (${options.protocol}): ${codeToString(err.code)}: ${said}${tokenHint}`,
        };
      } finally {
        session?.abort();
        agent?.destroy();
      }
    },
  };
}
