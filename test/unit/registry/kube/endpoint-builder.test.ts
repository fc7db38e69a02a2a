import { describe, expect, it } from "vitest";
import type { Endpoint, HealthStatus, Locality } from "../../../../lib/model/index.ts";
import {
  buildEndpoint,
  type EndpointBuildContext,
  type EndpointBuildResult,
  rawEndpointHealth,
} from "../../../../lib/registry/kube/endpoint-builder.ts";
import { sliceEndpoints } from "../../../../lib/registry/kube/endpoint-slice.ts";
import type { RawConditions } from "../../../../lib/registry/kube/records.ts";
import type { EndpointSlice } from "../../../../lib/registry/kube/types.ts";
import { loadKubeFixture } from "../../../fixtures/kube/load.ts";
import { modelService, nodeInfo, podInfo, raw } from "./builders.ts";

const cond = (ready: boolean, serving: boolean, terminating: boolean): RawConditions => ({
  ready,
  serving,
  terminating,
});
const ctx = (o: Partial<EndpointBuildContext> = {}): EndpointBuildContext => ({
  service: modelService(),
  pod: podInfo(),
  node: nodeInfo(),
  clusterId: "east",
  trustDomain: "cluster.local",
  sendUnhealthy: false,
  ...o,
});
const healthOf = (r: EndpointBuildResult): HealthStatus | string =>
  r.kind === "endpoint" ? r.endpoint.health : r.kind;
const endpointOf = (r: EndpointBuildResult): Endpoint => {
  if (r.kind !== "endpoint") throw new Error(`expected an endpoint, got ${JSON.stringify(r)}`);
  return r.endpoint;
};

describe("rawEndpointHealth", () => {
  const cases: { c: RawConditions; publishNotReady?: boolean; want: HealthStatus }[] = [
    { c: cond(true, true, false), want: "HEALTHY" },
    { c: cond(true, false, true), want: "HEALTHY" },
    { c: cond(false, true, true), want: "DRAINING" },
    { c: cond(false, false, true), want: "TERMINATING" },
    { c: cond(false, true, false), want: "UNHEALTHY" },
    { c: cond(false, false, false), want: "UNHEALTHY" },
    { c: cond(false, false, false), publishNotReady: true, want: "HEALTHY" },
    { c: cond(false, false, true), publishNotReady: true, want: "HEALTHY" },
    { c: cond(false, true, true), publishNotReady: true, want: "HEALTHY" },
  ];
  for (const c of cases) {
    it(`${JSON.stringify(c.c)}${c.publishNotReady ? " publishNotReadyAddresses" : ""} ▶ ${c.want}`, () => {
      const service = c.publishNotReady ? { publishNotReadyAddresses: true } : undefined;
      expect(rawEndpointHealth(c.c, service)).toBe(c.want);
    });
  }
});

describe("buildEndpoint: which endpoints are served", () => {
  const persistent = modelService({ labels: { "istio.io/persistent-session": "session-cookie" } });
  const cases: {
    name: string;
    c: RawConditions;
    ctx: Partial<EndpointBuildContext>;
    want: HealthStatus | "skip";
  }[] = [
    { name: "healthy", c: cond(true, true, false), ctx: {}, want: "HEALTHY" },
    {
      name: "healthy without a service record",
      c: cond(true, true, false),
      ctx: { service: undefined },
      want: "HEALTHY",
    },
    { name: "unhealthy is skipped by default", c: cond(false, false, false), ctx: {}, want: "skip" },
    {
      name: "unhealthy is sent with sendUnhealthy",
      c: cond(false, false, false),
      ctx: { sendUnhealthy: true },
      want: "UNHEALTHY",
    },
    {
      name: "unhealthy is sent when the service sets a traffic distribution",
      c: cond(false, false, false),
      ctx: { service: modelService({ trafficDistribution: "PreferSameZone" }) },
      want: "UNHEALTHY",
    },
    {
      name: "unhealthy without a service record",
      c: cond(false, false, false),
      ctx: { service: undefined },
      want: "skip",
    },
    {
      name: "terminating is never sent",
      c: cond(false, false, true),
      ctx: { sendUnhealthy: true },
      want: "skip",
    },
    {
      name: "terminating is not sent to persistent sessions either",
      c: cond(false, false, true),
      ctx: { service: persistent, sendUnhealthy: true },
      want: "skip",
    },
    {
      name: "draining is skipped by default",
      c: cond(false, true, true),
      ctx: { sendUnhealthy: true },
      want: "skip",
    },
    {
      name: "draining is sent to persistent-session services",
      c: cond(false, true, true),
      ctx: { service: persistent },
      want: "DRAINING",
    },
    {
      name: "the header persistent-session label alone does not serve draining endpoints (Istio's EDS filter)",
      c: cond(false, true, true),
      ctx: { service: modelService({ labels: { "istio.io/persistent-session-header": "x-session" } }) },
      want: "skip",
    },
    {
      name: "an empty persistent-session label is no persistent session",
      c: cond(false, true, true),
      ctx: { service: modelService({ labels: { "istio.io/persistent-session": "" } }) },
      want: "skip",
    },
    {
      name: "publishNotReadyAddresses serves a not-ready endpoint as healthy",
      c: cond(false, false, false),
      ctx: { service: modelService({ publishNotReadyAddresses: true }) },
      want: "HEALTHY",
    },
    {
      name: "a pod labelled istio.io/draining is skipped without persistent sessions",
      c: cond(true, true, false),
      ctx: { pod: podInfo({ labels: { "istio.io/draining": "true" } }) },
      want: "skip",
    },
    {
      name: "a pod labelled istio.io/draining is sent DRAINING to persistent sessions",
      c: cond(true, true, false),
      ctx: { service: persistent, pod: podInfo({ labels: { "istio.io/draining": "true" } }) },
      want: "DRAINING",
    },
    {
      name: "an empty istio.io/draining label changes nothing",
      c: cond(true, true, false),
      ctx: { pod: podInfo({ labels: { "istio.io/draining": "" } }) },
      want: "HEALTHY",
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const got = buildEndpoint(raw({ conditions: c.c }), ctx(c.ctx));
      expect(healthOf(got)).toBe(c.want);
      if (got.kind === "skip") expect(got.reason).not.toBe("");
    });
  }
});

describe("buildEndpoint: joining the pod", () => {
  const cases: {
    name: string;
    raw: Parameters<typeof raw>[0];
    ctx: Partial<EndpointBuildContext>;
    want: string;
  }[] = [
    { name: "named pod not seen yet ▶ wait", raw: {}, ctx: { pod: undefined }, want: "wait-for-pod" },
    {
      name: "another pod passed ▶ wait",
      raw: {},
      ctx: { pod: podInfo({ name: "reviews-v2" }) },
      want: "wait-for-pod",
    },
    {
      name: "same name in another namespace ▶ wait",
      raw: {},
      ctx: { pod: podInfo({ namespace: "other" }) },
      want: "wait-for-pod",
    },
    {
      name: "a terminating endpoint whose pod is gone is skipped, not waited for",
      raw: { conditions: cond(false, false, true) },
      ctx: { pod: undefined },
      want: "skip",
    },
    {
      name: "no pod reference and none found ▶ built",
      raw: { pod: undefined },
      ctx: { pod: undefined },
      want: "endpoint",
    },
    { name: "no pod reference, pod found by IP ▶ built", raw: { pod: undefined }, ctx: {}, want: "endpoint" },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(buildEndpoint(raw(c.raw), ctx(c.ctx)).kind).toBe(c.want);
    });
  }

  it("with the pod: its labels augmented, its identity, the node's locality", () => {
    expect(endpointOf(buildEndpoint(raw(), ctx()))).toEqual<Endpoint>({
      address: "10.244.1.12",
      port: 9080,
      servicePortName: "grpc",
      labels: {
        app: "reviews",
        "kubernetes.io/hostname": "worker-a",
        "topology.istio.io/cluster": "east",
        "topology.istio.io/subzone": "rack-7",
        "topology.kubernetes.io/region": "us-east-1",
        "topology.kubernetes.io/zone": "us-east-1a",
        version: "v1",
      },
      locality: { region: "us-east-1", zone: "us-east-1a", subzone: "rack-7" },
      serviceAccount: "spiffe://cluster.local/ns/bookinfo/sa/bookinfo-reviews",
      health: "HEALTHY",
    });
  });

  it("without a pod: no identity, the cluster label and the slice's zone", () => {
    const got = endpointOf(buildEndpoint(raw({ pod: undefined }), ctx({ pod: undefined, node: undefined })));
    expect(got.serviceAccount).toBe("");
    expect(got.labels).toEqual({
      "topology.istio.io/cluster": "east",
      "topology.kubernetes.io/zone": "us-east-1a",
    });
    expect(got.locality).toEqual({ region: "", zone: "us-east-1a", subzone: "" });
  });

  it("the trust domain and the pod's namespace name the identity", () => {
    const got = buildEndpoint(
      raw({ pod: undefined }),
      ctx({ trustDomain: "corp.example", pod: podInfo({ namespace: "shop", serviceAccount: "default" }) }),
    );
    expect(endpointOf(got).serviceAccount).toBe("spiffe://corp.example/ns/shop/sa/default");
  });

  it("labels come out sorted and the pod's labels are not mutated", () => {
    const pod = podInfo({ labels: { z: "1", a: "2" } });
    const got = endpointOf(buildEndpoint(raw(), ctx({ pod })));
    expect(Object.keys(got.labels)).toEqual([...Object.keys(got.labels)].sort());
    expect(pod.labels).toEqual({ z: "1", a: "2" });
  });

  it("topology labels override pod labels of the same key; empty values add nothing", () => {
    const pod = podInfo({ labels: { "topology.kubernetes.io/zone": "stale" }, nodeName: "" });
    const got = endpointOf(
      buildEndpoint(raw(), ctx({ pod, clusterId: "", node: nodeInfo({ subzone: "" }) })),
    );
    expect(got.labels).toEqual({
      "topology.kubernetes.io/region": "us-east-1",
      "topology.kubernetes.io/zone": "us-east-1a",
    });
  });
});

describe("buildEndpoint: locality", () => {
  const l = (region: string, zone: string, subzone = ""): Locality => ({ region, zone, subzone });
  const cases: {
    name: string;
    ctx: Partial<EndpointBuildContext>;
    raw?: Parameters<typeof raw>[0];
    want: Locality;
  }[] = [
    { name: "the node's labels", ctx: {}, want: l("us-east-1", "us-east-1a", "rack-7") },
    {
      name: "the pod's istio-locality label wins over the node",
      ctx: { pod: podInfo({ labels: { "istio-locality": "eu-west-1.eu-west-1c" } }) },
      want: l("eu-west-1", "eu-west-1c"),
    },
    {
      name: "the pod's topology.istio.io/locality label wins too",
      ctx: { pod: podInfo({ labels: { "topology.istio.io/locality": "eu/eu-a/r1" } }) },
      want: l("eu", "eu-a", "r1"),
    },
    {
      name: "no node ▶ the slice's zone",
      ctx: { node: undefined },
      raw: { zone: "us-east-1b" },
      want: l("", "us-east-1b"),
    },
    {
      name: "a node without topology labels ▶ the slice's zone",
      ctx: { node: nodeInfo({ region: "", zone: "", subzone: "" }) },
      raw: { zone: "us-east-1b" },
      want: l("", "us-east-1b"),
    },
    { name: "no node and no zone ▶ empty", ctx: { node: undefined }, raw: { zone: "" }, want: l("", "") },
    {
      name: "no pod, a node ▶ the node's",
      ctx: { pod: undefined },
      raw: { pod: undefined },
      want: l("us-east-1", "us-east-1a", "rack-7"),
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(endpointOf(buildEndpoint(raw(c.raw), ctx(c.ctx))).locality).toEqual(c.want);
    });
  }
});

describe("from the API server slice to endpoints", () => {
  it("terminating slice: ready served, serving-terminating only for persistent sessions, terminating never", () => {
    const raws = sliceEndpoints(loadKubeFixture<EndpointSlice>("endpointslice-terminating.json"));
    const pods = new Map(
      raws.map((r) => [r.pod!.name, podInfo({ name: r.pod!.name, nodeName: r.nodeName, labels: {} })]),
    );
    const run = (labels: Record<string, string>) =>
      raws.map((r) => {
        const built = buildEndpoint(
          r,
          ctx({ pod: pods.get(r.pod!.name), node: undefined, service: modelService({ labels }) }),
        );
        return [r.address, healthOf(built)];
      });
    expect(run({})).toEqual([
      ["10.244.1.30", "HEALTHY"],
      ["10.244.3.21", "skip"],
      ["10.244.3.9", "skip"],
    ]);
    expect(run({ "istio.io/persistent-session": "c" })).toEqual([
      ["10.244.1.30", "HEALTHY"],
      ["10.244.3.21", "DRAINING"],
      ["10.244.3.9", "skip"],
    ]);
  });
});
