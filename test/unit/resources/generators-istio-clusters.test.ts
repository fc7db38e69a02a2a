/** CDS and EDS from a DestinationRule, decoded field by field; a view without Istio config is unchanged. */
import { describe, expect, it } from "vitest";
import { type Cluster, Cluster_LbPolicy } from "../../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import type { ClusterLoadAssignment } from "../../../lib/gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import type { ServiceView } from "../../../lib/resources/types.ts";
import { toStored } from "../../../lib/resources/version.ts";
import { ctx, endpoint, HOST, port, service, shards, view } from "../xds/builders.ts";
import { clusterGenerator, endpointGenerator, generateAll } from "../xds/checked-generators.ts";
import { drModel, istioView, vsModel } from "../xds/istio-views.ts";

const clusters = (v: ServiceView) =>
  new Map(clusterGenerator.generate(v, ctx).map((g) => [g.name, g.message as Cluster]));
const ms = (d: { seconds: bigint; nanos: number } | undefined) =>
  d === undefined ? undefined : Number(d.seconds) * 1000 + d.nanos / 1e6;

describe("CDS from a DestinationRule", () => {
  it("one EDS cluster per port and subset, default first, in the rule's order", () => {
    const v = istioView({ destinationRule: drModel() });
    expect([...clusters(v).keys()]).toEqual([
      `outbound|8080||${HOST}`,
      `outbound|8080|v1|${HOST}`,
      `outbound|8080|v2|${HOST}`,
      `outbound|9080||${HOST}`,
      `outbound|9080|v1|${HOST}`,
      `outbound|9080|v2|${HOST}`,
    ]);
    const c = clusters(v).get(`outbound|9080|v2|${HOST}`);
    expect(c?.edsClusterConfig?.serviceName).toBe(`outbound|9080|v2|${HOST}`);
    expect(c?.edsClusterConfig?.edsConfig?.configSourceSpecifier.case).toBe("ads");
    expect(c?.lbPolicy).toBe(Cluster_LbPolicy.ROUND_ROBIN);
    expect(c?.circuitBreakers).toBeUndefined();
    expect(c?.outlierDetection).toBeUndefined();
  });

  const lbCases = [
    { lb: { simple: "ROUND_ROBIN" }, want: Cluster_LbPolicy.ROUND_ROBIN },
    { lb: { simple: "LEAST_REQUEST" }, want: Cluster_LbPolicy.ROUND_ROBIN },
    { lb: { simple: "RANDOM" }, want: Cluster_LbPolicy.ROUND_ROBIN },
    { lb: { consistentHash: { httpHeaderName: "x-user" } }, want: Cluster_LbPolicy.RING_HASH },
    {
      lb: { consistentHash: { httpHeaderName: "x", ringHash: { minimumRingSize: 2048 } } },
      want: Cluster_LbPolicy.RING_HASH,
      ring: 2048n,
    },
  ];
  for (const c of lbCases) {
    it(`loadBalancer ${JSON.stringify(c.lb)} ▶ ${Cluster_LbPolicy[c.want]}`, () => {
      const dr = drModel({ trafficPolicy: { loadBalancer: c.lb } });
      const got = clusters(istioView({ destinationRule: dr })).get(`outbound|9080||${HOST}`);
      expect(got?.lbPolicy).toBe(c.want);
      const ring = got?.lbConfig.case === "ringHashLbConfig" ? got.lbConfig.value.minimumRingSize : undefined;
      expect(ring).toBe(c.ring);
    });
  }

  it("subset and port-level policies merge as Istio merges them", () => {
    const dr = drModel({
      trafficPolicy: {
        connectionPool: { http: { http2MaxRequests: 100 } },
        portLevelSettings: [
          { port: { number: 8080 }, loadBalancer: { consistentHash: { httpHeaderName: "h" } } },
        ],
      },
      subsets: [
        { name: "v1", labels: { version: "v1" } },
        {
          name: "v2",
          labels: { version: "v2" },
          trafficPolicy: {
            outlierDetection: {
              consecutive5xxErrors: 3,
              interval: "10s",
              baseEjectionTime: "30s",
              maxEjectionPercent: 50,
            },
          },
        },
      ],
    });
    const cs = clusters(istioView({ destinationRule: dr }));
    const max = (name: string) => cs.get(name)?.circuitBreakers?.thresholds[0]?.maxRequests;
    expect(max(`outbound|9080||${HOST}`)).toBe(100);
    expect(max(`outbound|9080|v1|${HOST}`)).toBe(100);
    expect(max(`outbound|9080|v2|${HOST}`)).toBe(100);
    // Port 8080's port-level policy replaces the top level: ring hash, no circuit breakers.
    expect(cs.get(`outbound|8080||${HOST}`)?.lbPolicy).toBe(Cluster_LbPolicy.RING_HASH);
    expect(cs.get(`outbound|8080||${HOST}`)?.circuitBreakers).toBeUndefined();
    const t = cs.get(`outbound|9080||${HOST}`)?.circuitBreakers?.thresholds[0];
    expect(t).toMatchObject({
      maxConnections: 0xffffffff,
      maxPendingRequests: 0xffffffff,
      maxRetries: 0xffffffff,
      trackRemaining: true,
    });
    const od = cs.get(`outbound|9080|v2|${HOST}`)?.outlierDetection;
    expect(od).toMatchObject({
      consecutive5xx: 3,
      enforcingConsecutive5xx: 100,
      enforcingSuccessRate: 0,
      maxEjectionPercent: 50,
    });
    expect(ms(od?.interval)).toBe(10_000);
    expect(ms(od?.baseEjectionTime)).toBe(30_000);
    expect(od?.consecutiveGatewayFailure).toBeUndefined();
    expect(cs.get(`outbound|9080|v2|${HOST}`)?.commonLbConfig?.healthyPanicThreshold?.value).toBe(0);
    expect(cs.get(`outbound|9080|v1|${HOST}`)?.outlierDetection).toBeUndefined();
  });
});

describe("EDS from a DestinationRule", () => {
  const addresses = (cla: ClusterLoadAssignment | undefined) =>
    cla?.endpoints.flatMap((l) =>
      l.lbEndpoints.map((e) => {
        const sa = e.hostIdentifier.case === "endpoint" ? e.hostIdentifier.value.address?.address : undefined;
        return sa?.case === "socketAddress" ? `${sa.value.address}:${sa.value.portSpecifier.value}` : "";
      }),
    );
  const cases = [
    { name: `outbound|9080||${HOST}`, want: ["10.0.0.1:9080", "10.0.0.2:9080", "10.0.0.3:9080"] },
    { name: `outbound|9080|v1|${HOST}`, want: ["10.0.0.1:9080"] },
    { name: `outbound|9080|v2|${HOST}`, want: ["10.0.0.2:9080", "10.0.0.3:9080"] },
    { name: `outbound|9080|both|${HOST}`, want: ["10.0.0.2:9080"] },
    { name: `outbound|9080|none|${HOST}`, want: [] },
    { name: `outbound|8080|v2|${HOST}`, want: ["10.0.0.2:8080"] },
    { name: `outbound|8080|v1|${HOST}`, want: [] },
  ];
  const dr = drModel({
    subsets: [
      { name: "v1", labels: { version: "v1" } },
      { name: "v2", labels: { version: "v2" } },
      { name: "both", labels: { version: "v2", app: "reviews" } },
      { name: "none", labels: { version: "v9" } },
    ],
  });
  const byName = new Map(
    endpointGenerator
      .generate(istioView({ destinationRule: dr }), ctx)
      .map((g) => [g.name, g.message as ClusterLoadAssignment]),
  );
  for (const c of cases) {
    it(`${c.name.split("|").slice(1, 3).join("|")}: endpoints carrying the subset's labels`, () => {
      expect(byName.get(c.name)?.clusterName).toBe(c.name);
      expect(addresses(byName.get(c.name))).toEqual(c.want);
    });
  }
});

describe("a view without Istio config is unchanged", () => {
  /** Versions the generators published before VirtualService/DestinationRule support (commit c83c21f). */
  const pinned = [
    `outbound|8080||${HOST} 56f2c991d5543671`,
    `outbound|9080||${HOST} f42c448e23ae35d4`,
    `outbound|8080||${HOST} a7cd6aee4dc50ece`,
    `outbound|9080||${HOST} 9b6608291b416dfa`,
    `${HOST}:8080 9af29207e0f7d0ca`,
    `${HOST}:9080 67a6c3162d4bdee1`,
    `${HOST}:8080 871dbfc5678155a7`,
    `${HOST}:9080 344f74a4b9fd72f5`,
  ];
  async function versions(v: ServiceView) {
    const out: string[] = [];
    for (const { resources } of generateAll(v, ctx))
      for (const g of resources) {
        const s = await toStored(g, "default/reviews");
        out.push(`${s.name} ${s.version}`);
      }
    return out;
  }
  /** The view the versions were pinned with. */
  const base = () =>
    view({
      services: [service({ ports: [port(), port({ name: "http", port: 8080, protocol: "HTTP" })] })],
      shards: shards({
        "Kubernetes/Kubernetes": [
          endpoint({ labels: { version: "v1" } }),
          endpoint({ address: "10.0.0.2", labels: { version: "v2" } }),
        ],
      }),
    });

  it("same versions as before", async () => {
    expect(await versions(base())).toEqual(pinned);
  });

  it("a DestinationRule without subsets or policy, a VirtualService routing to the default cluster: same versions", async () => {
    const dr = drModel({ subsets: [] });
    const vs = vsModel({ http: [{ match: [{ port: 1 }], route: [{ destination: { host: "reviews" } }] }] });
    expect(await versions({ ...base(), destinationRule: dr, virtualService: vs })).toEqual(pinned);
  });
});
