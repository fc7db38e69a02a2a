/**
 * Istio Sidecar resources as Envoy sidecars take them, end to end through the real Node runtime
 * (raw Delta ADS clients, every resource PGV-checked and cross-referenced by the client): a Sidecar
 * with a workloadSelector scopes the productpage sidecar whose LABELS it matches, not another
 * workload's sidecar of the namespace, and not a proxyless client's view; a Sidecar's ingress
 * listeners build the selected sidecar's inbound side (cluster to the defaultEndpoint, its chain).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Cluster, Cluster_DiscoveryType } from "../../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { sidecar } from "../../unit/registry/istio/builders.ts";
import { type DeltaStream, openDelta } from "../delta/delta-client.ts";
import { apply } from "../delta/mesh.ts";
import { podName } from "../support/kube.ts";
import { type RunningControlPlane, startControlPlane } from "../support/runtime.ts";
import { bookinfoEvents, productpageNode, sidecarNode } from "./bookinfo-mesh.ts";
import { holder, subscribeAll } from "./delta-holder.ts";

const { cluster: CDS, listener: LDS } = TypeUrl;
const host = (name: string) => `${name}.default.svc.cluster.local`;

let cp: RunningControlPlane;
const streams: { close(): void }[] = [];

beforeAll(async () => {
  cp = await startControlPlane({ PILOT_DEBOUNCE_AFTER: "5ms" });
  await apply(cp, bookinfoEvents());
});
afterAll(async () => {
  for (const s of streams) s.close();
  await cp?.stop();
});

/** A Delta client of `node` holding its CDS and LDS (each response ACKed). */
async function connect(node: object) {
  const d = openDelta(cp.xdsPort);
  streams.push(d);
  const h = holder(d);
  d.send({ typeUrl: CDS, node });
  d.send({ typeUrl: LDS });
  await h.take();
  return { d, h };
}

const outbound = (d: DeltaStream) => [...d.holds(CDS).keys()].filter((n) => n.startsWith("outbound|")).sort();

describe("a Sidecar with a workloadSelector", () => {
  it("scopes the productpage sidecar its labels match; another workload and a proxyless client keep their set", async () => {
    const pp = await connect(productpageNode());
    await subscribeAll(pp.d, pp.h);
    const ratingsIp = "10.1.0.14";
    const other = await connect(sidecarNode("ratings", podName("ratings", ratingsIp), ratingsIp));
    const grpc = await connect(productpageNode("grpc"));
    const all = ["details", "productpage", "ratings", "reviews"].map((n) => `outbound|9080||${host(n)}`);
    expect(outbound(pp.d)).toEqual(all);
    await apply(cp, [
      {
        type: "ADDED",
        object: {
          ...sidecar(
            {
              workloadSelector: { labels: { app: "productpage" } },
              egress: [{ hosts: [`./${host("reviews")}`] }],
            },
            { name: "productpage-only" },
          ),
          metadata: {
            name: "productpage-only",
            namespace: "default",
            resourceVersion: "3000",
            creationTimestamp: "2026-01-01T00:00:00Z",
          },
        },
      },
    ]);
    const rs = await pp.h.take();
    expect(rs.map((r) => r.typeUrl)).toContain(CDS);
    expect(outbound(pp.d)).toEqual([`outbound|9080||${host("reviews")}`]);
    await subscribeAll(pp.d, pp.h);
    const vhosts = pp.h
      .routes()
      .get("9080")
      ?.virtualHosts.map((v) => v.name);
    expect(vhosts).toEqual([`${host("reviews")}:9080`, "allow_any"]);
    expect(pp.d.dangling()).toEqual([]);
    // Another workload's sidecar, and a proxyless client (views keep namespace-wide Sidecars only): nothing.
    expect(await other.h.take()).toEqual([]);
    expect(outbound(other.d)).toEqual(all);
    expect(await grpc.h.take()).toEqual([]);
  });
});

describe("a Sidecar with ingress listeners", () => {
  it("builds the details sidecar's inbound side from them: a STATIC cluster to the defaultEndpoint", async () => {
    const ip = "10.1.0.11";
    const details = await connect(sidecarNode("details", podName("details", ip), ip));
    expect(typeOf(details.h.clusters().get("inbound|9080||"))).toBe("ORIGINAL_DST");
    await apply(cp, [
      {
        type: "ADDED",
        object: {
          ...sidecar({
            workloadSelector: { labels: { app: "details" } },
            ingress: [
              {
                port: { number: 9080, protocol: "HTTP", name: "http" },
                defaultEndpoint: "127.0.0.1:8080",
              },
            ],
          }),
          metadata: {
            name: "details-ingress",
            namespace: "default",
            resourceVersion: "3001",
            creationTimestamp: "2026-01-02T00:00:00Z",
          },
        },
      },
    ]);
    const rs = await details.h.take();
    expect(rs.map((r) => r.typeUrl)).toEqual([CDS, LDS]);
    const inbound = details.h.clusters().get("inbound|9080||");
    expect(typeOf(inbound)).toBe("STATIC");
    const ep = inbound?.loadAssignment?.endpoints[0]?.lbEndpoints[0]?.hostIdentifier;
    expect(ep?.case === "endpoint" && ep.value.address?.address).toMatchObject({
      case: "socketAddress",
      value: { address: "127.0.0.1", portSpecifier: { case: "portValue", value: 8080 } },
    });
    const chain = details.h
      .listeners()
      .get("virtualInbound")
      ?.filterChains.find((c) => c.name === "0.0.0.0_9080");
    expect(chain?.metadata?.filterMetadata.istio).toEqual({
      config: "/apis/networking.istio.io/v1alpha3/namespaces/default/sidecar/details-ingress",
    });
    await subscribeAll(details.d, details.h);
    expect(details.d.dangling()).toEqual([]);
  });
});

const typeOf = (c: Cluster | undefined) =>
  c?.clusterDiscoveryType.case === "type" ? Cluster_DiscoveryType[c.clusterDiscoveryType.value] : undefined;
