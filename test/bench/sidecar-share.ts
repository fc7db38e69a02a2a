/**
 * Envoy sidecar resources at scale (lib/xds/sidecar-snapshots.ts), over a memory store holding
 * `services` HTTP services of one namespace (3 endpoints each): the time and bytes of the first
 * sidecar's CDS + LDS + RDS (the snapshot built from the store), the time of a second proxy of the
 * same deployment (shared), and how many distinct resources `proxies` sidecars of that namespace
 * (pods of `deployments` deployments) are served, against the resources they hold in all (the ratio
 * the sharing rule buys). Prints one JSON line.
 * Run alone: `npx tsx test/bench/sidecar-share.ts [services] [proxies] [deployments]`.
 */
import { nodeSha256 } from "../../functions/node/sha256.ts";
import type { Endpoint, Service } from "../../lib/model/index.ts";
import { useSyncSha256 } from "../../lib/resources/version.ts";
import { TypeUrl } from "../../lib/resources/xds-types.ts";
import { keys } from "../../lib/store/keys.ts";
import { createMemoryStore } from "../../lib/store/memory.ts";
import { createSidecarSnapshots } from "../../lib/xds/sidecar-snapshots.ts";

const ns = "bench";
const podIp = (d: number, r: number) => `10.${100 + (d >> 8)}.${d & 255}.${r + 1}`;

export interface SidecarShareReport {
  services: number;
  proxies: number;
  firstMs: number;
  sharedMs: number;
  firstBytes: number;
  resourcesPerProxy: number;
  distinctResources: number;
  outboundClasses: number;
  inboundClasses: number;
  /** Distinct resources served / resources the proxies hold in all (1 would be one copy per proxy). */
  ratio: number;
}

/** Builds the mesh and measures (see the module comment). */
export async function measureSidecarShare(
  services = 1000,
  proxies = 1000,
  deployments = 100,
): Promise<SidecarShareReport> {
  useSyncSha256(nodeSha256);
  const store = createMemoryStore();
  for (let i = 0; i < services; i++) {
    const hostname = `s${i}.${ns}.svc.cluster.local`;
    const svc: Service = {
      hostname,
      name: `s${i}`,
      namespace: ns,
      clusterId: "Kubernetes",
      resolution: "ClientSideLB",
      addresses: [`10.96.${i >> 8}.${i & 255}`],
      ports: [{ name: "http", port: 8000 + (i % 20), protocol: "HTTP" }],
      labels: { app: `s${i}` },
    };
    // Deployment d's pods are the endpoints of service d (the first `deployments` services).
    const ips = i < deployments ? Array.from({ length: proxies / deployments }, (_, r) => podIp(i, r)) : [];
    while (ips.length < 3) ips.push(`10.200.${i >> 8}.${(i & 255) + ips.length}`);
    const endpoints: Endpoint[] = ips.map((address) => ({
      address,
      port: 8080,
      servicePortName: "http",
      labels: { app: `s${i}` },
      locality: { region: "", zone: "", subzone: "" },
      serviceAccount: `spiffe://cluster.local/ns/${ns}/sa/s${i}`,
      health: "HEALTHY",
    }));
    await store.put(keys.service(ns, hostname, "Kubernetes"), svc);
    await store.put(keys.shards(ns, hostname), {
      hostname,
      namespace: ns,
      shards: { "Kubernetes/Kubernetes": endpoints },
      serviceAccounts: [`spiffe://cluster.local/ns/${ns}/sa/s${i}`],
    });
  }
  const s = createSidecarSnapshots({ store, cache: true, maxClasses: 1000 });
  const node = (d: number, r: number) => ({
    id: `sidecar~${podIp(d, r)}~s${d}-${r}.${ns}~${ns}.svc.cluster.local`,
    metadata: { NAMESPACE: ns },
  });
  const types = [TypeUrl.cluster, TypeUrl.listener, TypeUrl.route];
  const readAll = async (d: number, r: number) => {
    const b = s.bind(node(d, r), ns);
    if (!b) throw new Error("not a sidecar");
    return (await Promise.all(types.map((t) => s.resources(b, t)))).flat();
  };
  let t = performance.now();
  const first = await readAll(0, 0);
  const firstMs = performance.now() - t;
  t = performance.now();
  await readAll(0, 1);
  const sharedMs = performance.now() - t;
  const distinct = new Map<string, number>();
  let held = 0;
  for (let p = 0; p < proxies; p++) {
    const d = p % deployments;
    const list = await readAll(d, Math.floor(p / deployments));
    held += list.length;
    for (const r of list) distinct.set(`${r.typeUrl}\n${r.name}\n${r.version}`, 1);
  }
  return {
    services,
    proxies,
    firstMs: Number(firstMs.toFixed(1)),
    sharedMs: Number(sharedMs.toFixed(2)),
    firstBytes: first.reduce((n, r) => n + r.body.length, 0),
    resourcesPerProxy: first.length,
    distinctResources: distinct.size,
    outboundClasses: s.size.outbound,
    inboundClasses: s.size.inbound,
    ratio: Number((distinct.size / held).toFixed(5)),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [services, proxies, deployments] = process.argv.slice(2).map(Number);
  console.log(
    JSON.stringify(await measureSidecarShare(services || 1000, proxies || 1000, deployments || 100)),
  );
}
