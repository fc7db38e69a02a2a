/**
 * The agent's SDS server for Envoy (envoy.service.secret.v3.SecretDiscoveryService) on Istio's
 * workload socket, served over gRPC (h2c on a Unix socket) by connect-node: StreamSecrets answers
 * each stream as lib/agent/sds-session.ts decides, pushing every new certificate; FetchSecrets
 * answers once; DeltaSecrets is left out (the router answers Unimplemented), as in Istio's SDS server (Envoy's SDS config from
 * Istio's generators is api_type GRPC, a SotW stream). Anyone who can open the socket gets the
 * workload's key, so its directory is the pod's to guard, as Istio's is.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { createServer, type Http2Server, type ServerHttp2Session } from "node:http2";
import { dirname } from "node:path";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { WorkloadSecret } from "../../lib/agent/cert-machine.ts";
import {
  newSdsSession,
  onSdsPublish,
  onSdsRequest,
  type SdsStep,
  sdsResources,
  secretTypeUrl,
} from "../../lib/agent/sds-session.ts";
import {
  type DiscoveryRequest,
  type DiscoveryResponse,
  DiscoveryResponseSchema,
} from "../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { SecretDiscoveryService } from "../../lib/gen/envoy/service/secret/v3/sds_pb.ts";
import { logWarn } from "../../lib/log/line-log.ts";
import { logSafe } from "../../lib/log-safe.ts";
import type { WorkloadCerts } from "./agent-certs.ts";
import { withGrpcMessageTrailer } from "./grpc-message-trailer.ts";
import { listenOn } from "./listen-on.ts";

/** A running SDS server. */
export interface SdsServer {
  close(): Promise<void>;
}

/** Serves SDS on the Unix socket `path` (its directory made if missing, a stale socket replaced). */
export async function serveSds(
  path: string,
  certs: WorkloadCerts,
  options: { log: (line: string) => void; readMaxBytes: number },
): Promise<SdsServer> {
  const { log } = options;
  const response = (names: string[], secret: WorkloadSecret): DiscoveryResponse =>
    create(DiscoveryResponseSchema, {
      versionInfo: secret.version,
      typeUrl: secretTypeUrl,
      nonce: randomUUID(),
      resources: sdsResources(names, secret),
    });
  const handler = connectNodeAdapter({
    readMaxBytes: options.readMaxBytes,
    routes: (router) =>
      router.service(SecretDiscoveryService, {
        async *streamSecrets(requests, ctx) {
          const events = createEvents<{ request: DiscoveryRequest } | { secret: WorkloadSecret }>();
          const unsubscribe = certs.subscribe((secret) => events.push({ secret }));
          void (async () => {
            try {
              for await (const request of requests) events.push({ request });
            } catch {
              // The stream broke: its end below is all there is to do.
            }
            events.end();
          })();
          let session = newSdsSession();
          try {
            for (;;) {
              const event = await events.next(ctx.signal);
              if (event === undefined) return;
              let step: SdsStep;
              if ("request" in event) {
                const r = event.request;
                if (r.typeUrl !== "" && r.typeUrl !== secretTypeUrl)
                  throw new ConnectError(
                    `SDS serves ${secretTypeUrl}, not ${r.typeUrl}`,
                    Code.InvalidArgument,
                  );
                step = onSdsRequest(
                  session,
                  {
                    resourceNames: r.resourceNames,
                    responseNonce: r.responseNonce,
                    errorDetail: r.errorDetail,
                  },
                  certs.current(),
                );
              } else step = onSdsPublish(session, event.secret);
              session = step.session;
              if (step.log) logWarn(log, logSafe(step.log));
              if (step.send) {
                const res = response(step.send.names, step.send.secret);
                session = { ...session, nonce: res.nonce };
                yield res;
              }
            }
          } finally {
            unsubscribe();
          }
        },
        async fetchSecrets(req) {
          const current = certs.current();
          if (current === undefined)
            throw new ConnectError("the workload certificate is not issued yet", Code.Unavailable);
          return response([...req.resourceNames], current);
        },
      }),
  });
  mkdirSync(dirname(path), { recursive: true });
  rmSync(path, { force: true });
  const server: Http2Server = createServer(withGrpcMessageTrailer(handler, ["/envoy.service.secret.v3."]));
  // Envoy's SDS streams never end on their own: closing destroys their sessions, or close would wait forever.
  const sessions = new Set<ServerHttp2Session>();
  server.on("session", (session: ServerHttp2Session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });
  await listenOn(server, (s) => s.listen(path), { variable: "EDGEPILOT_AGENT_SDS_SOCKET", port: path });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const session of sessions) session.destroy();
        rmSync(path, { force: true });
      }),
  };
}

/** A queue the stream's loop awaits: requests and certificates in arrival order, then its end. */
function createEvents<T>() {
  const items: T[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  const poke = () => {
    wake?.();
    wake = undefined;
  };
  return {
    push(item: T) {
      items.push(item);
      poke();
    },
    end() {
      ended = true;
      poke();
    },
    async next(signal: AbortSignal): Promise<T | undefined> {
      for (;;) {
        if (items.length > 0) return items.shift();
        if (ended || signal.aborted) return undefined;
        await new Promise<void>((resolve) => {
          const aborted = () => resolve();
          wake = () => {
            signal.removeEventListener("abort", aborted);
            resolve();
          };
          signal.addEventListener("abort", aborted, { once: true });
        });
      }
    },
  };
}
