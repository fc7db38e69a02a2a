import { describe, expect, it } from "vitest";
import { cidrContains, parseCidr, parseIp } from "../../../../lib/model/ip.ts";
import type { MeshNetworksModel } from "../../../../lib/registry/mesh/mesh-networks.ts";
import { networkResolution, networkTable } from "../../../../lib/resources/network-build.ts";
import {
  ambiguousRangesWarning,
  createNetworkResolver,
  type EndpointNetwork,
} from "../../../../lib/resources/network-resolve.ts";
import { emptyNetworkTable, sameResolution } from "../../../../lib/resources/network-table.ts";
import { endpoint } from "../../xds/builders.ts";

const NET = "topology.istio.io/network";

/** A mesh where every source has an answer for cluster c1 and the address 10.1.0.1. */
const model: MeshNetworksModel = {
  networks: {
    "by-cidr": { endpoints: [{ fromCidr: "10.1.0.0/16" }], gateways: [] },
    "by-registry": { endpoints: [{ fromRegistry: "c1" }, { fromRegistry: "c2" }], gateways: [] },
  },
};

function resolve(
  opts: {
    explicit?: string;
    provider?: "Kubernetes" | "External";
    systemLabel?: boolean;
    registry?: boolean;
  },
  address = "10.1.0.1",
): EndpointNetwork {
  const m: MeshNetworksModel =
    opts.registry === false
      ? { networks: { "by-cidr": { endpoints: [{ fromCidr: "10.1.0.0/16" }], gateways: [] } } }
      : model;
  const systems = opts.systemLabel ? [{ cluster: "c1", labels: { [NET]: "by-namespace" } }] : [];
  const resolver = createNetworkResolver(networkTable(networkResolution(m, systems), []));
  const e = endpoint({ address, ...(opts.explicit && { network: opts.explicit }) });
  return resolver?.resolve(e, opts.provider ?? "Kubernetes", "c1") ?? { network: "", source: "none" };
}

describe("an endpoint's network, in order", () => {
  it.each([
    [
      "a pod or namespace label (set at ingest) wins over all",
      { explicit: "pod-net", systemLabel: true },
      "pod-net",
      "label",
    ],
    [
      "a WorkloadEntry/ServiceEntry network wins over all",
      { explicit: "vm-net", provider: "External" as const, systemLabel: true },
      "vm-net",
      "entry",
    ],
    [
      "the system namespace label wins over fromRegistry and ranges",
      { systemLabel: true },
      "by-namespace",
      "systemNamespace",
    ],
    ["fromRegistry wins over ranges", {}, "by-registry", "fromRegistry"],
    ["a range when nothing else names one", { registry: false }, "by-cidr", "fromCidr"],
  ])("%s", (_, opts, network, source) => {
    expect(resolve(opts)).toMatchObject({ network, source });
  });

  it("no range holding the address: the default network", () => {
    expect(resolve({ registry: false }, "192.168.0.1")).toEqual({ network: "", source: "none" });
  });

  it("a mesh without networks gives no resolver (no metadata at all)", () => {
    expect(createNetworkResolver(emptyNetworkTable)).toBeUndefined();
    expect(createNetworkResolver(networkTable(networkResolution({ networks: {} }, []), []))).toBeUndefined();
  });
});

describe("fromCidr ranges", () => {
  const resolver = createNetworkResolver(
    networkTable(
      networkResolution(
        {
          networks: {
            v4: { endpoints: [{ fromCidr: "10.0.0.0/8" }], gateways: [] },
            v6: { endpoints: [{ fromCidr: "2001:db8::/32" }], gateways: [] },
            narrow: {
              endpoints: [{ fromCidr: "10.1.2.0/24" }, { fromCidr: "2001:db8:1::/48" }],
              gateways: [],
            },
            broken: { endpoints: [{ fromCidr: "10.0.0.0/33" }], gateways: [] },
          },
        },
        [],
      ),
      [],
    ),
  );
  const net = (address: string) => resolver?.resolve(endpoint({ address }), "Kubernetes", "c9");

  it.each([
    ["10.200.0.1", "v4", "10.0.0.0/8"],
    ["11.0.0.1", "", undefined],
    ["2001:db8:ffff::1", "v6", "2001:db8::/32"],
    ["2001:db9::1", "", undefined],
    ["api.example.com", "", undefined],
  ])("%s ▶ %j", (address, network, range) => {
    expect(net(address)?.network).toBe(network);
    expect(net(address)?.range).toBe(range);
  });

  it("an address in several ranges takes the first in MeshNetworks order; one warning line names them", () => {
    expect(net("10.1.2.3")).toEqual({ network: "v4", source: "fromCidr", range: "10.0.0.0/8" });
    expect(net("2001:db8:1::5")?.network).toBe("v6");
    net("10.1.2.3");
    const ambiguous = resolver?.ambiguous() ?? new Map();
    expect([...ambiguous.keys()]).toEqual(["10.1.2.3", "2001:db8:1::5"]);
    const line = ambiguousRangesWarning(ambiguous);
    expect(line?.split("\n")).toHaveLength(1);
    expect(line).toContain("10.1.2.3 (v4 10.0.0.0/8, narrow 10.1.2.0/24)");
    expect(ambiguousRangesWarning(new Map())).toBeUndefined();
  });

  it("a range that does not parse is left out of the table", () => {
    const table = networkTable(
      networkResolution({ networks: { b: { endpoints: [{ fromCidr: "x/8" }], gateways: [] } } }, []),
      [],
    );
    expect(table.networks).toEqual([{ name: "b", fromCidr: [], fromRegistry: [] }]);
  });
});

describe("parseCidr and cidrContains", () => {
  it.each([
    ["10.1.2.3/8", "10.0.0.0", 8],
    ["192.168.1.0/24", "192.168.1.0", 24],
    ["0.0.0.0/0", "0.0.0.0", 0],
    ["2001:db8::1/64", "2001:db8::", 64],
  ])("%s clears host bits", (text, network, bits) => {
    const r = parseCidr(text);
    const ip = parseIp(network);
    expect(r?.bits).toBe(bits);
    expect(ip.ok && Array.from(ip.bytes)).toEqual(Array.from(r?.bytes ?? []));
  });

  it.each([
    "10.0.0.0",
    "10.0.0.0/33",
    "10.0.0.0/-1",
    "10.0.0.0/08",
    "::/129",
    "host/8",
  ])("%s is no range", (t) => {
    expect(parseCidr(t)).toBeUndefined();
  });

  it("an address of the other family is never inside", () => {
    const r = parseCidr("0.0.0.0/0");
    const v6 = parseIp("::1");
    expect(r && v6.ok && cidrContains(r, v6.bytes)).toBe(false);
  });
});

describe("the resolution half of the table", () => {
  it("a cluster is taken by the first network naming it in fromRegistry; clusters sorted", () => {
    const r = networkResolution(
      {
        networks: {
          b: { endpoints: [{ fromRegistry: "c2" }, { fromRegistry: "c1" }], gateways: [] },
          a: { endpoints: [{ fromRegistry: "c1" }], gateways: [] },
        },
      },
      [
        { cluster: "c3", labels: { [NET]: "ns-net" } },
        { cluster: "c4", labels: {} },
      ],
    );
    expect(r.clusters).toEqual([
      { cluster: "c1", network: "b", source: "fromRegistry" },
      { cluster: "c2", network: "b", source: "fromRegistry" },
      { cluster: "c3", network: "ns-net", source: "systemNamespace" },
    ]);
  });

  it("gateways alone do not change the resolution", () => {
    const a = networkTable(networkResolution(model, []), []);
    const gw = {
      network: "x",
      cluster: "",
      address: "1.2.3.4",
      port: 15443,
      locality: "",
      source: "address",
    };
    expect(sameResolution(a, { ...a, gateways: [gw] })).toBe(true);
    expect(sameResolution(a, emptyNetworkTable)).toBe(false);
    expect(sameResolution(emptyNetworkTable, { gateways: [] })).toBe(true);
  });
});
