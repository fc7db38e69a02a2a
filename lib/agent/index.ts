/**
 * `edgepilot agent`: the xDS proxy beside a workload, as Istio's pilot-agent is for its Envoy. It
 * serves ADS (SotW and Delta) to the proxies of its pod on a loopback port and a Unix socket, and
 * holds ONE upstream connection for all of them. This module is the pure part; the Node driver is
 * functions/node/agent*.ts.
 *
 * ```
 *  local proxies (grpc-js-xds, Envoy)          edgepilot agent                         upstream
 *  ── ADS SotW/Delta ──▶ agent-local.ts tap ──▶ the server's own ADS handlers ─┐
 *     (namespace check, asks, NACKs)            (lib/xds/ads-handlers.ts)      │ read
 *                 │ demand / nack                                              ▼
 *                 ▼                                                   cache: memory Store,
 *        machine.ts step() ──send──▶ agent-upstream.ts ══ Delta ADS ══▶ Node edgepilot (XDS_PORT)
 *                 ▲  └──cache──▶ keys.resource(type, name) ─▶ push signal ─▶ local sessions
 *                 └──── responses, stream end, timers, token file changes
 * ```
 *
 * The cache. Per type URL, name ─▶ version + encoded resource, exactly what the upstream sent
 * (versions are the upstream's content hashes). It is a memory Store holding StoredResources
 * under keys.resource, so the local proxies are served by the server's own sessions over it
 * (lib/xds/sotw.ts, delta.ts through lib/xds/ads-handlers.ts and functions/node/ads-h2.ts):
 * ACK/NACK, wildcard, initial_resource_versions, removed_resources, response budgets and stream
 * limits are the server's rules, not reimplemented. Each cache change is announced on a push
 * signal with its bytes (ResourceChange), so local streams answer from the change, as the
 * server's streams answer from its flush.
 *
 * The upstream (EDGEPILOT_AGENT_UPSTREAM_PROTOCOL; transport.ts). `ads`: one HTTP/2 connection (h2c
 * or TLS) carrying one Delta ADS stream to a Node edgepilot (functions/node/agent-upstream.ts).
 * `watch`/`poll`: Connect DeltaPollService calls, one per type URL, each carrying the node, the type's
 * whole subscription and what the cache holds (functions/node/agent-connect-upstream.ts), to the
 * Worker or any host; Watch falls back to long-polled Poll where something between cuts streams
 * (transport.ts's rule); Poll/Watch carry no ACK, and a NACK only as a restarted call (nack.ts). Either is the same UpstreamStream to
 * the driver, and a session is one `op` to the machine. It opens at the first local proxy and
 * subscribes to the union of what local proxies ask for (names per type, or the wildcard;
 * demand.ts), which only grows while the agent lives.
 * Its node is the first local proxy's (id, metadata, locality). Every local node must claim the
 * agent's namespace (POD_NAMESPACE; local-node.ts): a proxy of another namespace is refused with
 * PermissionDenied saying why, since the one upstream stream asks as that namespace for all.
 *
 * Last good configuration (the restart rule of "Do no harm", end to end). The cache changes only
 * by what an upstream response carries; a stream that ends, a slow or unreachable upstream change
 * nothing, so local proxies keep what they have and a new local proxy is answered from the cache
 * at once. Every new upstream stream sends initial_resource_versions of the cache, so an upstream
 * (restarted, or another instance) that publishes the same resources resends nothing; removals
 * are applied only as the upstream publishes them, and the upstream holds removals until it is
 * synced (PILOT_SYNC_TIMEOUT). Locally, no proxy is told to remove what it holds until the
 * upstream answered every type asked for (removalsAllowed: the local sessions' sync gate), so a
 * restarted agent with an empty cache never empties a proxy that reconnects holding its config.
 *
 * Disk cache (EDGEPILOT_AGENT_CACHE_DIR; functions/node/agent-cache-file.ts, cache-snapshot.ts). The
 * cache's writes are mirrored to one file, saved debounced and at stop, atomically (temporary file,
 * fsync, rename), bounded; it hooks into the cache, not a stream, so any upstream kind feeds it. At
 * start a file is used whole or not at all (corrupt or foreign: logged, ignored): it fills the cache
 * before any local proxy is served, and seeds the machine's `held` (initialAgentState), so the first
 * upstream stream sends it as initial_resource_versions. A loaded cache is last good configuration:
 * GET /ready answers 200 with it (a restarted agent keeps its pod in its Services), but it answers no
 * type (`answered`), so removalsAllowed stays false until the upstream answered every type asked for.
 *
 * TLS (EDGEPILOT_AGENT_CA_FILE; functions/node/agent-tls.ts): an https:// upstream is verified against
 * the bundle (re-read at each new connection) or Node's default CA store; an untrusted certificate is
 * a failed stream, said as such and retried.
 *
 * Reconnects: jittered exponential backoff (lib/relay/backoff.ts), reset by a response or a stream
 * that lived long; one log line per upstream state change (connecting, connected, first
 * configuration cached, stream ended with its gRPC status, token refused).
 *
 * Auth upstream: `authorization: Bearer <token>` from a file, re-read when its directory changes
 * (fs.watch: a projected service-account token rotates by a symlink swap) and at each new stream;
 * an open stream keeps the token it was opened with (the server checks it at stream start). A
 * refused token (UNAUTHENTICATED) is logged naming the file and retried with backoff, and at once
 * when the file changes.
 *
 * NACKs flow through: the agent ACKs an upstream response only after `ackDelayMs` without a local
 * NACK of its type; a local proxy's NACK in that window answers it upstream with the proxy's
 * error_detail (prefixed by its node id), so the upstream's proxy status records it. Over Watch/Poll
 * (no nonce) the type's call restarts at once carrying that error_detail in its PollRequest. The agent never
 * NACKs on its own: it cannot judge a resource, only pass on a proxy's judgment.
 *
 * Readiness: GET /ready answers 200 once a first upstream response is cached or a disk cache was
 * loaded, else 503 (on EDGEPILOT_AGENT_READY_HOST, 127.0.0.1 unless set; 0.0.0.0 in a pod for kubelet).
 */
export { type AgentConfig, type AgentConfigResult, agentUsage, parseAgentConfig } from "./config.ts";
export { type Ask, addDemand, type Demand, deltaAsk, sotwAsk } from "./demand.ts";
export { localNodeProblem } from "./local-node.ts";
export {
  type AgentAction,
  type AgentContext,
  type AgentInput,
  type AgentState,
  initialAgentState,
  removalsAllowed,
  step,
  type UpstreamResource,
} from "./machine.ts";
export { maxNamesPerUpstreamRequest, type UpstreamRequest } from "./requests.ts";
export {
  afterWatchEnded,
  defaultTransportOptions,
  pollWaitMs,
  type TransportOptions,
  type UpstreamHttp,
  type UpstreamProtocol,
} from "./transport.ts";
