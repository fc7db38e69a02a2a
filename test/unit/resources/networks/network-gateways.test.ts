import { describe, expect, it } from "vitest";
import type { Service } from "../../../../lib/model/index.ts";
import type { MeshNetworksModel } from "../../../../lib/registry/mesh/mesh-networks.ts";
import {
  addressGateways,
  GATEWAY_PORT_LABEL,
  gatewayService,
  serviceGateways,
} from "../../../../lib/resources/network-gateways.ts";
import { port, service } from "../../xds/builders.ts";

const GW = "eastwestgateway.istio-system.svc.cluster.local";
const NET = "topology.istio.io/network";

const gatewayRecord = (clusterId: string, o: Partial<Service> = {}): Service =>
  service({
    hostname: GW,
    name: "eastwestgateway",
    namespace: "istio-system",
    clusterId,
    ports: [port({ name: "tls", port: 15443, protocol: "TLS" })],
    ...o,
  });

/** Two networks, each with its own cluster and the same gateway Service name. */
const model: MeshNetworksModel = {
  networks: {
    east: {
      endpoints: [{ fromRegistry: "c1" }],
      gateways: [
        { registryServiceName: GW, port: 15443, locality: "us-east1/a" },
        { address: "192.0.2.9", port: 443 },
      ],
    },
    west: { endpoints: [{ fromRegistry: "c2" }], gateways: [{ registryServiceName: GW, port: 15443 }] },
  },
};

describe("gateways", () => {
  it("an `address` gateway is taken as given, cluster ''", () => {
    expect(addressGateways(model)).toEqual([
      { network: "east", cluster: "", address: "192.0.2.9", port: 443, locality: "", source: "address" },
    ]);
  });

  it("registryServiceName: each cluster's load balancer ingress, for the network whose fromRegistry names that cluster", () => {
    const got = serviceGateways(
      [
        gatewayRecord("c1", { externalAddresses: ["203.0.113.1", "203.0.113.2"] }),
        gatewayRecord("c2", { externalAddresses: ["198.51.100.1"] }),
        // A cluster no network names in fromRegistry: its ingress is no gateway.
        gatewayRecord("c3", { externalAddresses: ["198.51.100.99"] }),
      ],
      model,
    );
    expect(
      got.map((g) => `${g.network} ${g.cluster} ${g.address}:${g.port} ${g.locality} ${g.source}`),
    ).toEqual([
      `east c1 203.0.113.1:15443 us-east1/a registryServiceName:${GW}@c1`,
      `east c1 203.0.113.2:15443 us-east1/a registryServiceName:${GW}@c1`,
      `west c2 198.51.100.1:15443  registryServiceName:${GW}@c2`,
    ]);
    expect(got.map(gatewayService)).toEqual([GW, GW, GW]);
  });

  it("a Service without load balancer ingress is no gateway", () => {
    expect(serviceGateways([gatewayRecord("c1")], model)).toEqual([]);
  });

  it("a Service labelled with a network is its gateway on networking.istio.io/gatewayPort (default 15443), in any cluster", () => {
    const labelled = (labels: Record<string, string>, ports = [15443]) =>
      serviceGateways(
        [
          gatewayRecord("c9", {
            labels,
            externalAddresses: ["203.0.113.5"],
            ports: ports.map((p) => port({ name: `p${p}`, port: p })),
          }),
        ],
        { networks: {} },
      );
    expect(labelled({ [NET]: "north" })).toEqual([
      {
        network: "north",
        cluster: "c9",
        address: "203.0.113.5",
        port: 15443,
        locality: "",
        source: `label:${GW}@c9`,
      },
    ]);
    expect(labelled({ [NET]: "north", [GATEWAY_PORT_LABEL]: "16443" }, [16443])[0]?.port).toBe(16443);
    // The Service must take the port, else it is no gateway (istiod warns).
    expect(labelled({ [NET]: "north", [GATEWAY_PORT_LABEL]: "16443" }, [15443])).toEqual([]);
    // A port label that is no number falls back to the default.
    expect(labelled({ [NET]: "north", [GATEWAY_PORT_LABEL]: "tls" })[0]?.port).toBe(15443);
  });

  it("the network label wins over registryServiceName for the same Service", () => {
    const got = serviceGateways(
      [gatewayRecord("c1", { labels: { [NET]: "north" }, externalAddresses: ["203.0.113.1"] })],
      model,
    );
    expect(got.map((g) => g.network)).toEqual(["north"]);
  });
});
