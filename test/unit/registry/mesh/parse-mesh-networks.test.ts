/**
 * MeshNetworks parsing and validation: istiod's TestValidateMeshNetworks, TestValidationIPAddress
 * and TestValidationIPSubnet cases (pkg/config/validation/agent/validation_test.go) as YAML, plus
 * the shape the model needs (one of each oneof, a required port, a locality shape); every error
 * names its field path.
 */
import { describe, expect, it } from "vitest";
import { parseMeshNetworks } from "../../../../lib/registry/mesh/parse-mesh-networks.ts";
import { describeProblem } from "../../../../lib/registry/mesh/yaml-document.ts";

/** One network `n1` with the given endpoints and gateways, as YAML. */
const n1 = (endpoints: unknown[], gateways: unknown[]) =>
  JSON.stringify({ networks: { n1: { endpoints, gateways } } });

const registryGateway = {
  registryServiceName: "istio-ingressgateway.istio-system.svc.cluster.local",
  port: 80,
};

const cases: { name: string; yaml: string; error?: string }[] = [
  // istiod TestValidateMeshNetworks
  { name: "empty MeshNetworks", yaml: "" },
  {
    name: "valid MeshNetworks (fromRegistry Kubernetes and cluster1, registry service gateways)",
    yaml: `
networks:
  n1:
    endpoints:
    - fromRegistry: Kubernetes
    gateways:
    - registryServiceName: istio-ingressgateway.istio-system.svc.cluster.local
      port: 80
  n2:
    endpoints:
    - fromRegistry: cluster1
    gateways:
    - registryServiceName: istio-ingressgateway.istio-system.svc.cluster.local
      port: 443
`,
  },
  {
    name: "invalid gateway address",
    yaml: n1([{ fromRegistry: "Kubernetes" }], [{ address: "1nv@lidhostname", port: 80 }]),
    error: 'networks.n1.gateways[0].address: "1nv@lidhostname" is not a valid IP address or DNS name',
  },
  {
    name: "invalid registry name",
    yaml: n1([{ fromRegistry: "cluster.local" }], [registryGateway]),
    error: 'networks.n1.endpoints[0].fromRegistry: invalid registry name "cluster.local"',
  },
  // istiod TestValidationIPSubnet / TestValidationIPAddress, through fromCidr
  { name: "valid ipv4 subnet", yaml: n1([{ fromCidr: "1.1.1.1/24" }], []) },
  {
    name: "invalid ipv4 subnet",
    yaml: n1([{ fromCidr: "1.1.1.1/48" }], []),
    error: 'networks.n1.endpoints[0].fromCidr: invalid CIDR "1.1.1.1/48"',
  },
  { name: "valid ipv6 subnet", yaml: n1([{ fromCidr: "2001:1::1/64" }], []) },
  {
    name: "invalid ipv6 subnet",
    yaml: n1([{ fromCidr: "2001:1::1/132" }], []),
    error: 'networks.n1.endpoints[0].fromCidr: invalid CIDR "2001:1::1/132"',
  },
  { name: "a plain address is a range of one (ValidateIPSubnet)", yaml: n1([{ fromCidr: "1.1.1.1" }], []) },
  {
    name: "invalid ipv4 address",
    yaml: n1([{ fromCidr: "1.1.A.1" }], []),
    error: 'networks.n1.endpoints[0].fromCidr: invalid CIDR "1.1.A.1"',
  },
  {
    name: "a CIDR missing an octet",
    yaml: JSON.stringify({ networks: { network1: { endpoints: [{ fromCidr: "10.0.0/8" }] } } }),
    error: 'networks.network1.endpoints[0].fromCidr: invalid CIDR "10.0.0/8"',
  },
  { name: "an IPv6 gateway address", yaml: n1([], [{ address: "2001:1::1", port: 15443 }]) },
  {
    name: "a DNS gateway address (RESOLVE_HOSTNAME_GATEWAYS)",
    yaml: n1([], [{ address: "gw.example.com", port: 15443 }]),
  },
  // The model's shape
  {
    name: "a gateway without a port",
    yaml: n1([], [{ address: "10.1.1.1" }]),
    error: "networks.n1.gateways[0].port: is required",
  },
  {
    name: "a gateway port out of range",
    yaml: n1([], [{ address: "10.1.1.1", port: 70000 }]),
    error: "networks.n1.gateways[0].port: port number 70000 must be in the range 1..65535",
  },
  {
    name: "a gateway with both registryServiceName and address",
    yaml: n1([], [{ ...registryGateway, address: "10.1.1.1" }]),
    error: "networks.n1.gateways[0]: only one of registryServiceName or address may be set",
  },
  {
    name: "a gateway with neither",
    yaml: n1([], [{ port: 80 }]),
  },
  {
    name: "a gateway with neither still needs a valid port",
    yaml: n1([], [{ port: 0 }]),
    error: "networks.n1.gateways[0].port: port number 0 must be in the range 1..65535",
  },
  {
    name: "an endpoints entry with both",
    yaml: n1([{ fromCidr: "10.0.0.0/8", fromRegistry: "c1" }], []),
    error: "networks.n1.endpoints[0]: only one of fromCidr or fromRegistry may be set",
  },
  {
    name: "an empty endpoints entry",
    yaml: n1([{}], []),
  },
  {
    name: "a bad registry service name",
    yaml: n1([], [{ registryServiceName: "bad_name.svc", port: 80 }]),
    error:
      'networks.n1.gateways[0].registryServiceName: domain name "bad_name.svc" invalid (label "bad_name" invalid)',
  },
  {
    name: "a locality deeper than region/zone/subzone (istiod does not check it)",
    yaml: n1([], [{ address: "10.1.1.1", port: 80, locality: "a/b/c/d" }]),
  },
  {
    name: "a network name that is no label value (istiod does not check it)",
    yaml: JSON.stringify({ networks: { "bad name": {} } }),
  },
  {
    name: "networks not a mapping",
    yaml: "networks: [a]",
    error: "networks: must be a mapping of network names, got array",
  },
  { name: "not YAML", yaml: "networks: {", error: "not valid YAML" },
  { name: "a list at the top", yaml: "- a", error: "must be a YAML mapping, got array" },
];

describe("parseMeshNetworks", () => {
  for (const c of cases)
    it(c.name, () => {
      const r = parseMeshNetworks(c.yaml);
      if (c.error === undefined) expect(r).toMatchObject({ ok: true });
      else {
        expect(r.ok).toBe(false);
        if (!r.ok) expect(describeProblem(r.problem)).toContain(c.error);
      }
    });

  it("builds the model: networks by name, oneofs kept, a port string read as protobuf JSON does, unknown keys ignored", () => {
    const r = parseMeshNetworks(`
networks:
  west:
    endpoints:
    - fromCidr: 10.1.0.0/16
    - fromRegistry: west-cluster
    gateways:
    - address: 192.0.2.10
      port: "15443"
      locality: us-west/zone-a
    somethingNew: true
  east:
    endpoints:
    - fromRegistry: east-cluster
    gateways:
    - registryServiceName: istio-eastwestgateway.istio-system.svc.cluster.local
      port: 15443
`);
    expect(r).toEqual({
      ok: true,
      value: {
        networks: {
          east: {
            endpoints: [{ fromRegistry: "east-cluster" }],
            gateways: [
              { port: 15443, registryServiceName: "istio-eastwestgateway.istio-system.svc.cluster.local" },
            ],
          },
          west: {
            endpoints: [{ fromCidr: "10.1.0.0/16" }, { fromRegistry: "west-cluster" }],
            gateways: [{ port: 15443, address: "192.0.2.10", locality: "us-west/zone-a" }],
          },
        },
      },
    });
  });
});
