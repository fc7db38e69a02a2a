/**
 * Bytes on the agent's upstream wire for ONE endpoint change: Delta ADS, Connect Watch and
 * long-polled Poll (over HTTP/2 h2c to XDS_PORT, and Watch/Poll over HTTP/1.1 to PORT), measured in
 * one run against one Node edgepilot (a child process, XDS_AUTH=token). Each row runs a real agent
 * (functions/node/agent-runtime.ts) whose upstream goes through a counting TCP proxy
 * (test/e2e/support/tcp-proxy.ts: bytes at the socket, both ways, TLS-less so headers are counted as
 * sent), and one local proxy (a raw Delta ADS client on the agent: CDS wildcard and every service's
 * ClusterLoadAssignment, ACKing each answer). Per change: from the ingest POST until the local proxy
 * holds the new assignment and the upstream wire is quiet for 400 ms (the ADS ACK, the next long
 * poll included). Median of `changes`. Run alone: `npx tsx test/bench/agent-upstream-bytes.ts`.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { startAgent } from "../../functions/node/agent-runtime.ts";
import type { UpstreamHttp, UpstreamProtocol } from "../../lib/agent/transport.ts";
import { AggregatedDiscoveryService } from "../../lib/gen/envoy/service/discovery/v3/ads_pb.ts";
import {
  type DeltaDiscoveryRequest,
  DeltaDiscoveryRequestSchema,
} from "../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { TypeUrl } from "../../lib/resources/xds-types.ts";
import { endpointSlice, event, pod, service } from "../e2e/support/kube.ts";
import { requestQueue } from "../e2e/support/request-queue.ts";
import { type RunningControlPlane, startControlPlane } from "../e2e/support/runtime.ts";
import { startTcpProxy } from "../e2e/support/tcp-proxy.ts";

const ns = "default";
const xdsToken = "agent-bench-xds-token-0001";
const host = (i: number) => `svc-${i}.${ns}.svc.cluster.local`;

/** One transport's cost of one change: bytes agent ─▶ upstream and back, and wall time to the local proxy. */
export interface UpstreamBytesRow {
  transport: string;
  services: number;
  up: number;
  down: number;
  ms: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, what: string, ms = 20_000) {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`agent-upstream-bytes: ${what}: never happened`);
    await sleep(10);
  }
}

/** The local proxy: Delta ADS on the agent, CDS wildcard plus every EDS name, ACKing each answer. */
function localProxy(port: number, services: number) {
  const baseUrl = `http://127.0.0.1:${port}`;
  const sessionManager = new Http2SessionManager(baseUrl);
  const client = createClient(AggregatedDiscoveryService, createGrpcTransport({ baseUrl, sessionManager }));
  const queue = requestQueue<DeltaDiscoveryRequest>();
  const abort = new AbortController();
  const held = new Map<string, string>();
  const nodeInfo = {
    id: `sidecar~127.0.0.9~bench.${ns}~${ns}.svc.cluster.local`,
    metadata: { GENERATOR: "grpc" },
  };
  queue.push(
    create(DeltaDiscoveryRequestSchema, {
      node: nodeInfo,
      typeUrl: TypeUrl.cluster,
      resourceNamesSubscribe: ["*"],
    }),
  );
  queue.push(
    create(DeltaDiscoveryRequestSchema, {
      typeUrl: TypeUrl.endpoint,
      resourceNamesSubscribe: Array.from({ length: services }, (_, i) => `outbound|9080||${host(i)}`),
    }),
  );
  void (async () => {
    try {
      for await (const r of client.deltaAggregatedResources(queue.requests, { signal: abort.signal })) {
        for (const res of r.resources) held.set(`${r.typeUrl} ${res.name}`, res.version);
        queue.push(create(DeltaDiscoveryRequestSchema, { typeUrl: r.typeUrl, responseNonce: r.nonce }));
      }
    } catch {
      // closed
    }
  })();
  return {
    held,
    close() {
      queue.close();
      abort.abort();
      sessionManager.abort();
    },
  };
}

const sliceOf = (i: number, ip: string) =>
  endpointSlice(`svc-${i}-1`, `svc-${i}`, ns, { name: "grpc", port: 9080 }, [{ ip, ready: true }]);

/** Measures every transport against one control plane, for a mesh of `services`. */
export async function measureUpstreamBytes(services: number, changes = 3): Promise<UpstreamBytesRow[]> {
  const dir = mkdtempSync(join(tmpdir(), "edgepilot-upstream-bytes-"));
  writeFileSync(join(dir, "token"), xdsToken);
  let cp: RunningControlPlane | undefined;
  const rows: UpstreamBytesRow[] = [];
  try {
    cp = await startControlPlane({
      XDS_AUTH: "token",
      EDGEPILOT_XDS_TOKEN: xdsToken,
      PILOT_DEBOUNCE_AFTER: "10ms",
    });
    // Pods first: an endpoint whose pod is unknown waits for it (as Istio's does).
    const ips = (i: number) => [
      `10.1.${Math.floor(i / 250)}.${(i % 250) + 1}`,
      `10.2.${Math.floor(i / 250)}.${(i % 250) + 1}`,
    ];
    const events = [];
    for (let i = 0; i < services; i++)
      for (const ip of ips(i)) events.push(event("ADDED", pod(`svc-${i}`, ns, ip)));
    for (let i = 0; i < services; i++) {
      events.push(event("ADDED", service(`svc-${i}`, ns, [{ name: "grpc", port: 9080 }])));
      events.push(event("ADDED", sliceOf(i, ips(i)[0] as string)));
    }
    await cp.post(events);
    let move = 0;
    const kinds: [string, UpstreamProtocol, UpstreamHttp][] = [
      ["ADS (h2c)", "ads", "2"],
      ["Watch (h2c)", "watch", "2"],
      ["Poll (h2c)", "poll", "2"],
      ["Watch (HTTP/1.1)", "watch", "1.1"],
      ["Poll (HTTP/1.1)", "poll", "1.1"],
    ];
    for (const [transport, protocol, http] of kinds) {
      const proxy = await startTcpProxy(http === "2" ? cp.xdsPort : cp.port);
      const agent = await startAgent(
        {
          upstream: `http://127.0.0.1:${proxy.port}`,
          tokenFile: join(dir, "token"),
          namespace: ns,
          port: 0,
          socket: undefined,
          readyPort: 0,
          protocol,
          http,
        },
        { log: () => {}, ackDelayMs: 100 },
      );
      const local = localProxy(agent.port, services);
      const eds0 = `${TypeUrl.endpoint} outbound|9080||${host(0)}`;
      const quiet = async () => {
        let last = -1;
        while (proxy.bytes.up + proxy.bytes.down !== last) {
          last = proxy.bytes.up + proxy.bytes.down;
          await sleep(400);
        }
      };
      await until(() => local.held.size === 2 * services, `${transport}: the local proxy holds the mesh`);
      await quiet();
      const up: number[] = [];
      const down: number[] = [];
      const ms: number[] = [];
      for (let c = 0; c < changes; c++) {
        const before = { up: proxy.bytes.up, down: proxy.bytes.down, version: local.held.get(eds0) };
        const at = performance.now();
        const res = await cp.post([event("MODIFIED", sliceOf(0, ips(0)[++move % 2] as string))]);
        if (res.status !== 200) throw new Error(`ingest: ${res.status} ${await res.text()}`);
        await until(
          () => local.held.get(eds0) !== before.version,
          `${transport}: the change reaches the local proxy`,
        );
        ms.push(performance.now() - at);
        await quiet();
        up.push(proxy.bytes.up - before.up);
        down.push(proxy.bytes.down - before.down);
      }
      rows.push({ transport, services, up: median(up), down: median(down), ms: median(ms) });
      local.close();
      await agent.stop();
      await proxy.close();
    }
  } finally {
    await cp?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

/** Prints the table (run.ts and a run alone share it). */
export function printUpstreamBytes(rows: UpstreamBytesRow[]): void {
  const pad = (v: string | number, n: number) => String(v).padStart(n);
  console.log(
    "services | upstream          | agent ▶ upstream bytes | upstream ▶ agent bytes | total | change ▶ local proxy ms",
  );
  for (const r of rows) {
    console.log(
      `${pad(r.services, 8)} | ${r.transport.padEnd(17)} | ${pad(r.up, 22)} | ${pad(r.down, 22)} | ${pad(r.up + r.down, 5)} | ${pad(r.ms.toFixed(0), 23)}`,
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const n of [1, 100]) printUpstreamBytes(await measureUpstreamBytes(n));
  process.exit(0);
}
