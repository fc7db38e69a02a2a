/** The EDS generator's `istio` {network} metadata: only when the mesh has networks, per endpoint's resolved network. */
import { toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  type ClusterLoadAssignment,
  ClusterLoadAssignmentSchema,
} from "../../../../lib/gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { networkResolution, networkTable } from "../../../../lib/resources/network-build.ts";
import { createNetworkResolver } from "../../../../lib/resources/network-resolve.ts";
import type { GenerateContext, ServiceView } from "../../../../lib/resources/types.ts";
import { ctx, endpoint, HOST, shards, view } from "../../xds/builders.ts";
import { endpointGenerator } from "../../xds/checked-generators.ts";

const TLS = "security.istio.io/tlsMode";
const mesh = (): ServiceView =>
  view({
    shards: shards({
      "Kubernetes/c1": [
        endpoint({ address: "10.0.0.1", labels: { [TLS]: "istio" } }),
        endpoint({ address: "10.0.0.2", network: "pod-net" }),
      ],
      "Kubernetes/c2": [endpoint({ address: "10.2.0.1" }), endpoint({ address: "10.9.0.1" })],
      "External/c1": [endpoint({ address: "10.0.0.3", network: "vm-net" })],
    }),
  });

const withNetworks: GenerateContext = {
  ...ctx,
  networks: createNetworkResolver(
    networkTable(
      networkResolution(
        {
          networks: {
            west: { endpoints: [{ fromRegistry: "c1" }], gateways: [] },
            ranged: { endpoints: [{ fromCidr: "10.2.0.0/16" }], gateways: [] },
          },
        },
        [],
      ),
      [],
    ),
  ),
};

function assignment(c: GenerateContext): ClusterLoadAssignment {
  const g = endpointGenerator.generate(mesh(), c).find((r) => r.name === `outbound|9080||${HOST}`);
  return g?.message as ClusterLoadAssignment;
}
const metadata = (cla: ClusterLoadAssignment) =>
  cla.endpoints.flatMap((l) =>
    l.lbEndpoints.map((e) => {
      const ep = e.hostIdentifier.case === "endpoint" ? e.hostIdentifier.value : undefined;
      const sa = ep?.address?.address.case === "socketAddress" ? ep.address.address.value : undefined;
      return [sa?.address, e.metadata?.filterMetadata ?? null];
    }),
  );

describe("network metadata", () => {
  it("with networks: each endpoint whose network is not '' carries istio {network} beside the socket match", () => {
    expect(metadata(assignment(withNetworks))).toEqual([
      ["10.0.0.1", { "envoy.transport_socket_match": { tlsMode: "istio" }, istio: { network: "west" } }],
      ["10.0.0.2", { istio: { network: "pod-net" } }],
      ["10.0.0.3", { istio: { network: "vm-net" } }],
      ["10.2.0.1", { istio: { network: "ranged" } }],
      ["10.9.0.1", null],
    ]);
  });

  it("without networks: no network metadata at all, even for an explicit network (bytes as before)", () => {
    expect(metadata(assignment(ctx))).toEqual([
      ["10.0.0.1", { "envoy.transport_socket_match": { tlsMode: "istio" } }],
      ["10.0.0.2", null],
      ["10.0.0.3", null],
      ["10.2.0.1", null],
      ["10.9.0.1", null],
    ]);
  });

  it("the socket match is encoded first, so equal assignments encode to equal bytes", () => {
    const a = toBinary(ClusterLoadAssignmentSchema, assignment(withNetworks));
    const b = toBinary(ClusterLoadAssignmentSchema, assignment(withNetworks));
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
    const first = assignment(withNetworks).endpoints[0]?.lbEndpoints[0]?.metadata?.filterMetadata ?? {};
    expect(Object.keys(first)).toEqual(["envoy.transport_socket_match", "istio"]);
  });
});
