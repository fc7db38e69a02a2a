/**
 * What network views cost at scale: `services` gRPC services of one namespace, each with two pods on
 * network `net-a` and two on `net-b` (topology.istio.io/network pod labels, tlsMode istio), both
 * networks with a gateway in MeshNetworks (the `istio` ConfigMap, ingested). Measured over the
 * published store: the shared assignments and the time to read them all (the floor: what a view
 * costs beyond it), then per view (a proxy of net-a; of net-b; of net-a asking for net-a only; without
 * NETWORK, which istiod 1.30 also sends through gateways): how many assignments differ from the
 * shared ones (the extra resources a view holds), their bytes, the time to derive the view's whole
 * EDS for its first proxy and for a second proxy of the same view (read from the host's cache). Prints one JSON line per view.
 * Run alone: `npx tsx test/bench/network-views.ts [services]`.
 */
import { nodeSha256 } from "../../functions/node/sha256.ts";
import type { StoredResource } from "../../lib/resources/types.ts";
import { useSyncSha256 } from "../../lib/resources/version.ts";
import { TypeUrl } from "../../lib/resources/xds-types.ts";
import { createNetworkViews } from "../../lib/xds/network-views.ts";
import { createStoreSource } from "../../lib/xds/source.ts";
import { buildMesh, sliceEvent } from "./mesh.ts";

const ns = "bench";
let revision = 1;
const rv = () => String(++revision);
const podIp = (n: number, i: number) => `10.${100 + i * 16 + (n >> 16)}.${(n >> 8) & 255}.${n & 255 || 1}`;
const network = (i: number) => (i < 2 ? "net-a" : "net-b");

/** Service `n`: a Service, four Pods (two per network) and one EndpointSlice. */
function serviceEvents(n: number): unknown[] {
  const name = `svc-${n}`;
  const ips = [0, 1, 2, 3].map((i) => podIp(n, i));
  const pods = ips.map((ip, i) => ({
    type: "ADDED",
    object: {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: `${name}-${i}`,
        namespace: ns,
        resourceVersion: rv(),
        labels: { app: name, "topology.istio.io/network": network(i), "security.istio.io/tlsMode": "istio" },
      },
      spec: { serviceAccountName: name, nodeName: "node-a" },
      status: { phase: "Running", podIP: ip, podIPs: [{ ip }] },
    },
  }));
  const service = {
    type: "ADDED",
    object: {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace: ns, resourceVersion: rv() },
      spec: { clusterIP: `10.96.${n >> 8}.${n & 255}`, ports: [{ name: "grpc", port: 9080 }] },
    },
  };
  return [...pods, service, sliceEvent(n, ips, "ADDED")];
}

const meshNetworks = `networks:
  net-a:
    endpoints: [{fromCidr: "10.100.0.0/12"}]
    gateways: [{address: 192.0.2.1, port: 15443}]
  net-b:
    endpoints: [{fromCidr: "10.116.0.0/12"}]
    gateways: [{address: 192.0.2.2, port: 15443}, {address: 192.0.2.3, port: 15443}]
`;

/** One view's figures. */
export interface NetworkViewReport {
  view: string;
  services: number;
  assignments: number;
  /** Assignments whose content differs from the shared one: the extra resources the view holds. */
  differing: number;
  sharedBytes: number;
  /** Reading the shared assignments by name, no view: the floor beside firstProxyMs. */
  sharedReadMs: number;
  /** Bytes of the view's assignments; those of the differing ones are what the host's cache holds more. */
  viewBytes: number;
  firstProxyMs: number;
  secondProxyMs: number;
}

/** Builds and publishes the mesh, then measures each view (see the module comment). */
export async function measureNetworkViews(services = 10_000): Promise<NetworkViewReport[]> {
  useSyncSha256(nodeSha256);
  // buildMesh(0): an empty published mesh and its ingest-and-push, fed the events below.
  const { store, ingestAndPush: ingest } = await buildMesh(0);
  await ingest([
    {
      type: "ADDED",
      object: {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "istio", namespace: "istio-system", resourceVersion: rv() },
        data: { meshNetworks },
      },
    },
  ]);
  for (let n = 0; n < services; n += 250) {
    const batch: unknown[] = [];
    for (let k = n; k < Math.min(services, n + 250); k++) batch.push(...serviceEvents(k));
    await ingest(batch);
  }
  const base = createStoreSource(store);
  const shared = await base.list(TypeUrl.endpoint);
  const sharedBytes = bytesOf(shared);
  const byName = new Map(shared.map((r) => [r.name, r.version]));
  const names = shared.map((r) => r.name);
  const t0 = performance.now();
  await base.get(TypeUrl.endpoint, names);
  const sharedReadMs = Math.round(performance.now() - t0);
  const views: { view: string; metadata: Record<string, string> }[] = [
    { view: "NETWORK=net-a", metadata: { NETWORK: "net-a" } },
    { view: "NETWORK=net-b", metadata: { NETWORK: "net-b" } },
    {
      view: "NETWORK=net-a REQUESTED_NETWORK_VIEW=net-a",
      metadata: { NETWORK: "net-a", REQUESTED_NETWORK_VIEW: "net-a" },
    },
    { view: "no NETWORK", metadata: {} },
  ];
  const out: NetworkViewReport[] = [];
  for (const { view, metadata } of views) {
    // One host's views per measured view: its cache holds that view's assignments only.
    const networkViews = createNetworkViews({ store });
    const node = (proxy: number) => ({
      id: `sidecar~10.250.0.${proxy}~client-${proxy}.${ns}~${ns}.svc.cluster.local`,
      metadata: { GENERATOR: "grpc", ...metadata },
    });
    let t = performance.now();
    const first = await networkViews
      .source(networkViews.bind(node(1) as never), base)
      .get(TypeUrl.endpoint, names);
    const firstProxyMs = performance.now() - t;
    t = performance.now();
    await networkViews.source(networkViews.bind(node(2) as never), base).get(TypeUrl.endpoint, names);
    const secondProxyMs = performance.now() - t;
    out.push({
      view,
      services,
      assignments: first.length,
      differing: first.filter((r) => byName.get(r.name) !== r.version).length,
      sharedBytes,
      sharedReadMs,
      viewBytes: bytesOf(first),
      firstProxyMs: Math.round(firstProxyMs),
      secondProxyMs: Math.round(secondProxyMs),
    });
  }
  return out;
}

function bytesOf(rs: readonly StoredResource[]): number {
  let n = 0;
  for (const r of rs) n += r.body.length;
  return n;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const r of await measureNetworkViews(Number(process.argv[2] ?? 10_000)))
    console.log(JSON.stringify(r));
}
