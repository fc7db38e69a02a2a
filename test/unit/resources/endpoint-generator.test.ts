import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { HealthStatus } from "../../../lib/gen/envoy/config/core/v3/health_check_pb.ts";
import {
  type ClusterLoadAssignment,
  ClusterLoadAssignmentSchema,
} from "../../../lib/gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import type { Endpoint } from "../../../lib/model/index.ts";
import type { ServiceView } from "../../../lib/resources/types.ts";
import { ctx, endpoint, HOST, port, service, shards, view } from "../xds/builders.ts";
import { endpointGenerator } from "../xds/checked-generators.ts";

/** The CLA for port 9080, flattened to what a test compares. */
function summarize(v: ServiceView, p = 9080) {
  const g = endpointGenerator.generate(v, ctx).find((r) => r.name === `outbound|${p}||${HOST}`);
  const cla = g?.message as ClusterLoadAssignment | undefined;
  return cla?.endpoints.map((l) => ({
    locality: `${l.locality?.region}/${l.locality?.zone}/${l.locality?.subZone}`,
    weight: l.loadBalancingWeight,
    endpoints: l.lbEndpoints.map((e) => {
      const ep = e.hostIdentifier.case === "endpoint" ? e.hostIdentifier.value : undefined;
      const sa = ep?.address?.address.case === "socketAddress" ? ep.address.address.value : undefined;
      const portValue = sa?.portSpecifier.case === "portValue" ? sa.portSpecifier.value : undefined;
      return `${sa?.address}:${portValue} ${HealthStatus[e.healthStatus]} w${e.loadBalancingWeight}`;
    }),
  }));
}

const at = (address: string, o: Partial<Endpoint> = {}) => endpoint({ address, ...o });
const zone = (zone: string) => ({ region: "r1", zone, subzone: "" });

describe("endpoint generator", () => {
  const cases: { name: string; view: ServiceView; want: ReturnType<typeof summarize> }[] = [
    {
      name: "groups by locality, sorted, weight = endpoint count",
      view: view({
        shards: shards({
          "Kubernetes/Kubernetes": [
            at("10.0.0.3", { locality: zone("z2") }),
            at("10.0.0.2", { locality: zone("z1") }),
            at("10.0.0.1", { locality: zone("z2") }),
          ],
        }),
      }),
      want: [
        { locality: "r1/z1/", weight: 1, endpoints: ["10.0.0.2:9080 HEALTHY w1"] },
        {
          locality: "r1/z2/",
          weight: 2,
          endpoints: ["10.0.0.1:9080 HEALTHY w1", "10.0.0.3:9080 HEALTHY w1"],
        },
      ],
    },
    {
      name: "maps health; terminating endpoints are not sent",
      view: view({
        shards: shards({
          "Kubernetes/Kubernetes": [
            at("10.0.0.1", { health: "HEALTHY" }),
            at("10.0.0.2", { health: "UNHEALTHY" }),
            at("10.0.0.3", { health: "DRAINING" }),
            at("10.0.0.4", { health: "TERMINATING" }),
          ],
        }),
      }),
      want: [
        {
          locality: "r1/z1/",
          weight: 3,
          endpoints: ["10.0.0.1:9080 HEALTHY w1", "10.0.0.2:9080 UNHEALTHY w1", "10.0.0.3:9080 DRAINING w1"],
        },
      ],
    },
    {
      name: "only endpoints of the port's name",
      view: view({
        services: [service({ ports: [port(), port({ name: "metrics", port: 15014, protocol: "HTTP" })] })],
        shards: shards({
          "Kubernetes/Kubernetes": [
            at("10.0.0.1"),
            at("10.0.0.1", { servicePortName: "metrics", port: 15014 }),
          ],
        }),
      }),
      want: [{ locality: "r1/z1/", weight: 1, endpoints: ["10.0.0.1:9080 HEALTHY w1"] }],
    },
    {
      name: "an unnamed single port matches endpoints with an empty port name",
      view: view({
        services: [service({ ports: [port({ name: "" })] })],
        shards: shards({ "Kubernetes/Kubernetes": [at("10.0.0.1", { servicePortName: "" })] }),
      }),
      want: [{ locality: "r1/z1/", weight: 1, endpoints: ["10.0.0.1:9080 HEALTHY w1"] }],
    },
    {
      name: "merges every shard; a duplicate address:port is served once, the first shard winning",
      view: view({
        services: [service({ clusterId: "east" }), service({ clusterId: "west" })],
        shards: shards({
          "Kubernetes/west": [
            at("10.0.0.1", { locality: zone("zw") }),
            at("10.0.0.9", { locality: zone("zw") }),
          ],
          "Kubernetes/east": [at("10.0.0.1", { locality: zone("ze"), health: "UNHEALTHY" })],
        }),
      }),
      want: [
        { locality: "r1/ze/", weight: 1, endpoints: ["10.0.0.1:9080 UNHEALTHY w1"] },
        { locality: "r1/zw/", weight: 1, endpoints: ["10.0.0.9:9080 HEALTHY w1"] },
      ],
    },
    {
      name: "each shard's endpoints are matched by its own cluster's port name",
      view: view({
        services: [
          service({ clusterId: "east", ports: [port({ name: "grpc" })] }),
          service({ clusterId: "west", ports: [port({ name: "grpc-west" })] }),
        ],
        shards: shards({
          "Kubernetes/east": [at("10.0.0.1"), at("10.0.0.2", { servicePortName: "grpc-west" })],
          "Kubernetes/west": [at("10.0.1.1", { servicePortName: "grpc-west" }), at("10.0.1.2")],
        }),
      }),
      want: [
        {
          locality: "r1/z1/",
          weight: 2,
          endpoints: ["10.0.0.1:9080 HEALTHY w1", "10.0.1.1:9080 HEALTHY w1"],
        },
      ],
    },
    {
      name: "a shard without a Service record uses the merged port (first cluster's name)",
      view: view({
        services: [
          service({ clusterId: "b", ports: [port({ name: "grpc-b" })] }),
          service({ clusterId: "a", ports: [port({ name: "grpc-a" })] }),
        ],
        shards: shards({
          "External/remote": [
            at("10.0.2.1", { servicePortName: "grpc-a" }),
            at("10.0.2.2", { servicePortName: "grpc-b" }),
          ],
        }),
      }),
      want: [{ locality: "r1/z1/", weight: 1, endpoints: ["10.0.2.1:9080 HEALTHY w1"] }],
    },
    { name: "no shards: an empty assignment", view: view({ shards: undefined }), want: [] },
    {
      name: "a locality left empty by filtering disappears",
      view: view({
        shards: shards({ "Kubernetes/Kubernetes": [at("10.0.0.1", { health: "TERMINATING" })] }),
      }),
      want: [],
    },
  ];
  for (const c of cases) it(c.name, () => expect(summarize(c.view)).toEqual(c.want));

  it("always sets the locality, even when unknown, so it survives the wire", () => {
    const unknown = { region: "", zone: "", subzone: "" };
    const v = view({ shards: shards({ "Kubernetes/Kubernetes": [endpoint({ locality: unknown })] }) });
    const [g] = endpointGenerator.generate(v, ctx);
    const back = fromBinary(
      ClusterLoadAssignmentSchema,
      toBinary(ClusterLoadAssignmentSchema, g?.message as ClusterLoadAssignment),
    );
    expect(back.clusterName).toBe(`outbound|9080||${HOST}`);
    expect(back.endpoints[0]?.locality).toBeDefined();
    expect(back.endpoints[0]?.loadBalancingWeight).toBe(1);
  });

  // AppendLbEndpointMetadata: what a sidecar's auto-mTLS transport_socket_matches select by.
  it.each([
    ["istio", { "envoy.transport_socket_match": { tlsMode: "istio" } }],
    ["disabled", undefined],
    [undefined, undefined],
  ])("an endpoint labelled security.istio.io/tlsMode %s carries %j", (tlsMode, want) => {
    const labels: Record<string, string> = tlsMode ? { "security.istio.io/tlsMode": tlsMode } : {};
    const v = view({ shards: shards({ "Kubernetes/Kubernetes": [endpoint({ labels })] }) });
    const [g] = endpointGenerator.generate(v, ctx);
    const back = fromBinary(
      ClusterLoadAssignmentSchema,
      toBinary(ClusterLoadAssignmentSchema, g?.message as ClusterLoadAssignment),
    );
    expect(back.endpoints[0]?.lbEndpoints[0]?.metadata?.filterMetadata).toEqual(want);
  });
});
