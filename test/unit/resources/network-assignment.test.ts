/**
 * Split-horizon EDS as a pure function (lib/resources/network-assignment.ts), tables after istiod's
 * ep_filters_test.go: which endpoints a view keeps, drops or replaces by gateways, their weights,
 * the mTLS rule, REQUESTED_NETWORK_VIEW and the proxy's IP family.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { AddressSchema, SocketAddressSchema } from "../../../lib/gen/envoy/config/core/v3/address_pb.ts";
import { LocalitySchema, MetadataSchema } from "../../../lib/gen/envoy/config/core/v3/base_pb.ts";
import {
  EndpointSchema,
  type LbEndpoint,
  LbEndpointSchema,
  LocalityLbEndpointsSchema,
} from "../../../lib/gen/envoy/config/endpoint/v3/endpoint_components_pb.ts";
import {
  type ClusterLoadAssignment,
  ClusterLoadAssignmentSchema,
} from "../../../lib/gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { indexGateways } from "../../../lib/resources/gateway-index.ts";
import { scaledWeight, viewAssignment, viewResource } from "../../../lib/resources/network-assignment.ts";
import type { ResolvedGateway } from "../../../lib/resources/network-table.ts";
import type { NetworkView } from "../../../lib/resources/network-view.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { toStored } from "../../../lib/resources/version.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";

const NAME = "outbound|80||svc.ns.svc.cluster.local";

/** An endpoint `address` on `network` ("" none), with tlsMode istio unless `mtls` is false. */
function ep(address: string, network: string, o: { mtls?: boolean; weight?: number; port?: number } = {}) {
  const filterMetadata: Record<string, Record<string, string>> = {};
  if (o.mtls !== false) filterMetadata["envoy.transport_socket_match"] = { tlsMode: "istio" };
  if (network !== "") filterMetadata.istio = { network };
  const socket = create(SocketAddressSchema, {
    address,
    portSpecifier: { case: "portValue", value: o.port ?? 8080 },
  });
  return create(LbEndpointSchema, {
    hostIdentifier: {
      case: "endpoint",
      value: create(EndpointSchema, {
        address: create(AddressSchema, { address: { case: "socketAddress", value: socket } }),
      }),
    },
    loadBalancingWeight: o.weight ?? 1,
    ...(Object.keys(filterMetadata).length > 0 && { metadata: create(MetadataSchema, { filterMetadata }) }),
  });
}

/** A shared assignment: one locality per entry (zone name ─▶ endpoints), weights = endpoint count. */
function cla(localities: Record<string, LbEndpoint[]>): ClusterLoadAssignment {
  return create(ClusterLoadAssignmentSchema, {
    clusterName: NAME,
    endpoints: Object.entries(localities).map(([zone, lbEndpoints]) =>
      create(LocalityLbEndpointsSchema, {
        locality: create(LocalitySchema, { region: "r", zone }),
        lbEndpoints,
        loadBalancingWeight: lbEndpoints.length,
      }),
    ),
  });
}

const gw = (network: string, address: string, o: Partial<ResolvedGateway> = {}): ResolvedGateway => ({
  network,
  cluster: "",
  address,
  port: 15443,
  locality: "",
  source: "address",
  ...o,
});

const view = (network: string, o: Partial<NetworkView> = {}): NetworkView => ({
  network,
  requested: undefined,
  family: "",
  ...o,
});

/** What a test compares: per locality `zone=weight`, then `address:port wN [tlsMode/network]`. */
function summary(c: ClusterLoadAssignment | undefined): string[] | undefined {
  if (c === undefined) return undefined;
  return c.endpoints.map((l) => {
    const eps = l.lbEndpoints.map((e) => {
      const a = e.hostIdentifier.case === "endpoint" ? e.hostIdentifier.value.address?.address : undefined;
      const s = a?.case === "socketAddress" ? a.value : undefined;
      const port = s?.portSpecifier.case === "portValue" ? s.portSpecifier.value : 0;
      const tls = e.metadata?.filterMetadata["envoy.transport_socket_match"]?.tlsMode ?? "-";
      const net = e.metadata?.filterMetadata.istio?.network ?? "-";
      return `${s?.address}:${port} w${e.loadBalancingWeight} ${tls}/${net}`;
    });
    return `${l.locality?.zone}=${l.loadBalancingWeight} ${eps.join(" ")}`;
  });
}

describe("a view's assignment", () => {
  const cases: {
    name: string;
    view: NetworkView;
    gateways: ResolvedGateway[];
    cla: ClusterLoadAssignment;
    want: string[] | undefined;
  }[] = [
    {
      name: "no gateway anywhere: served as it is, even with a requested view (istiod)",
      view: view("A", { requested: ["A"] }),
      gateways: [],
      cla: cla({ z: [ep("10.0.0.1", "A"), ep("10.1.0.1", "B")] }),
      want: undefined,
    },
    {
      name: "B's endpoints replaced by B's gateway, weighted by the endpoints behind it",
      view: view("A"),
      gateways: [gw("B", "192.0.2.1")],
      cla: cla({ z: [ep("10.0.0.1", "A"), ep("10.1.0.1", "B"), ep("10.1.0.2", "B")] }),
      want: ["z=3 10.0.0.1:8080 w1 istio/A 192.0.2.1:15443 w2 istio/B"],
    },
    {
      name: "nothing to drop, replace or reweigh: the shared assignment",
      view: view("A"),
      gateways: [gw("B", "192.0.2.1")],
      cla: cla({ z: [ep("10.0.0.1", "A"), ep("10.0.0.2", "")] }),
      want: undefined,
    },
    {
      name: "two gateways: every weight scaled by 2, each gateway takes half of each remote endpoint",
      view: view("A"),
      gateways: [gw("B", "192.0.2.2"), gw("B", "192.0.2.1")],
      cla: cla({ z: [ep("10.0.0.1", "A"), ep("10.1.0.1", "B"), ep("10.1.0.2", "B")] }),
      want: ["z=6 10.0.0.1:8080 w2 istio/A 192.0.2.1:15443 w2 istio/B 192.0.2.2:15443 w2 istio/B"],
    },
    {
      name: "scale factor is the lcm over networks: 2 gateways for B, 3 for C ▶ 6",
      view: view("A"),
      gateways: [
        gw("B", "192.0.2.1"),
        gw("B", "192.0.2.2"),
        gw("C", "198.51.100.1"),
        gw("C", "198.51.100.2"),
        gw("C", "198.51.100.3"),
      ],
      cla: cla({ z: [ep("10.0.0.1", "A", { weight: 2 }), ep("10.1.0.1", "B")] }),
      want: ["z=18 10.0.0.1:8080 w12 istio/A 192.0.2.1:15443 w3 istio/B 192.0.2.2:15443 w3 istio/B"],
    },
    {
      name: "a remote endpoint without Istio mTLS is dropped (the gateway routes by SNI)",
      view: view("A"),
      gateways: [gw("B", "192.0.2.1")],
      cla: cla({
        z: [ep("10.0.0.1", "A", { mtls: false }), ep("10.1.0.1", "B", { mtls: false }), ep("10.1.0.2", "B")],
      }),
      want: ["z=2 10.0.0.1:8080 w1 -/A 192.0.2.1:15443 w1 istio/B"],
    },
    {
      name: "a network without gateways is reached directly",
      view: view("A"),
      gateways: [gw("B", "192.0.2.1")],
      cla: cla({ z: [ep("10.0.0.1", "A"), ep("10.2.0.1", "C", { mtls: false })] }),
      want: undefined,
    },
    {
      name: "REQUESTED_NETWORK_VIEW A: B's endpoints dropped, endpoints without a network kept",
      view: view("A", { requested: ["A"] }),
      gateways: [gw("B", "192.0.2.1")],
      cla: cla({ z: [ep("10.0.0.1", "A"), ep("10.0.0.9", ""), ep("10.1.0.1", "B")] }),
      want: ["z=2 10.0.0.1:8080 w1 istio/A 10.0.0.9:8080 w1 istio/-"],
    },
    {
      name: "REQUESTED_NETWORK_VIEW B from A: only B (through its gateway) and network-less endpoints",
      view: view("A", { requested: ["B"] }),
      gateways: [gw("B", "192.0.2.1")],
      cla: cla({ z: [ep("10.0.0.1", "A"), ep("10.0.0.9", ""), ep("10.1.0.1", "B")] }),
      want: ["z=2 10.0.0.9:8080 w1 istio/- 192.0.2.1:15443 w1 istio/B"],
    },
    {
      name: "a proxy without a network reaches a network with gateways through them (istiod forceGateway)",
      view: view(""),
      gateways: [gw("B", "192.0.2.1")],
      cla: cla({ z: [ep("10.0.0.1", "A"), ep("10.0.0.9", ""), ep("10.1.0.1", "B")] }),
      want: ["z=3 10.0.0.1:8080 w1 istio/A 10.0.0.9:8080 w1 istio/- 192.0.2.1:15443 w1 istio/B"],
    },
    {
      name: "an IPv4 proxy: only B's IPv4 gateway",
      view: view("A", { family: "IPv4" }),
      gateways: [gw("B", "192.0.2.1"), gw("B", "2001:db8::1")],
      cla: cla({ z: [ep("10.1.0.1", "B")] }),
      want: ["z=2 192.0.2.1:15443 w2 istio/B"],
    },
    {
      name: "an IPv6 proxy: only B's IPv6 gateway",
      view: view("A", { family: "IPv6" }),
      gateways: [gw("B", "192.0.2.1"), gw("B", "2001:db8::1")],
      cla: cla({ z: [ep("10.1.0.1", "B")] }),
      want: ["z=2 2001:db8::1:15443 w2 istio/B"],
    },
    {
      name: "a dual-stack proxy: both",
      view: view("A"),
      gateways: [gw("B", "192.0.2.1"), gw("B", "2001:db8::1")],
      cla: cla({ z: [ep("10.1.0.1", "B")] }),
      want: ["z=2 192.0.2.1:15443 w1 istio/B 2001:db8::1:15443 w1 istio/B"],
    },
    {
      name: "an IPv6 proxy and only IPv4 gateways: B's endpoints dropped, not served raw",
      view: view("A", { family: "IPv6" }),
      gateways: [gw("B", "192.0.2.1")],
      cla: cla({ z: [ep("10.0.0.1", "A"), ep("10.1.0.1", "B")] }),
      want: ["z=1 10.0.0.1:8080 w1 istio/A"],
    },
    {
      name: "a hostname gateway is not an EDS gateway: B is reached directly when it has no other",
      view: view("A"),
      gateways: [gw("B", "gw.example.com"), gw("C", "192.0.2.9")],
      cla: cla({ z: [ep("10.1.0.1", "B")] }),
      want: undefined,
    },
    {
      name: "per locality: the gateway once per address, the later locality's weight added to the first",
      view: view("A"),
      gateways: [gw("B", "192.0.2.1")],
      cla: cla({
        z1: [ep("10.0.0.1", "A"), ep("10.1.0.1", "B")],
        z2: [ep("10.1.0.2", "B"), ep("10.1.0.3", "B")],
      }),
      want: ["z1=4 10.0.0.1:8080 w1 istio/A 192.0.2.1:15443 w3 istio/B"],
    },
    {
      name: "a locality left without endpoints is dropped",
      view: view("A", { requested: ["A"] }),
      gateways: [gw("B", "192.0.2.1")],
      cla: cla({ z1: [ep("10.0.0.1", "A")], z2: [ep("10.1.0.2", "B")] }),
      want: ["z1=1 10.0.0.1:8080 w1 istio/A"],
    },
    {
      name: "a gateway of the endpoint's cluster is preferred (istio.cluster metadata)",
      view: view("A"),
      gateways: [gw("B", "192.0.2.1", { cluster: "c1" }), gw("B", "192.0.2.2", { cluster: "c2" })],
      cla: cla({
        z: [
          (() => {
            const e = ep("10.1.0.1", "B");
            if (e.metadata) e.metadata.filterMetadata.istio = { network: "B", cluster: "c2" };
            return e;
          })(),
        ],
      }),
      want: ["z=2 192.0.2.2:15443 w2 istio/B"],
    },
  ];
  it.each(cases)("$name", ({ view: v, gateways, cla: c, want }) => {
    const before = toBinary(ClusterLoadAssignmentSchema, c);
    expect(summary(viewAssignment(c, v, indexGateways({ gateways })))).toEqual(want);
    // The shared message is never written.
    expect(toBinary(ClusterLoadAssignmentSchema, c)).toEqual(before);
  });
});

describe("weights", () => {
  it.each([
    { weight: undefined, scale: 3, want: 3 },
    { weight: 0, scale: 2, want: 2 },
    { weight: 5, scale: 2, want: 10 },
    { weight: 0xffffffff, scale: 2, want: 0xffffffff },
  ])("weight $weight scaled by $scale ▶ $want (unset is 1, clipped to uint32)", ({ weight, scale, want }) => {
    expect(scaledWeight(weight, scale)).toBe(want);
  });
});

describe("a view's stored assignment", () => {
  const shared = async (c: ClusterLoadAssignment): Promise<StoredResource> =>
    toStored({ name: NAME, schema: ClusterLoadAssignmentSchema, message: c }, "ns/svc.ns.svc.cluster.local");
  const index = indexGateways({ gateways: [gw("B", "192.0.2.1")] });

  it("unchanged: the shared resource itself", async () => {
    const s = await shared(cla({ z: [ep("10.0.0.1", "A")] }));
    expect(await viewResource(s, view("A"), index)).toBe(s);
  });

  it("derived: encoded and versioned by content; equal inputs give equal versions", async () => {
    const s = await shared(cla({ z: [ep("10.0.0.1", "A"), ep("10.1.0.1", "B")] }));
    const a = await viewResource(s, view("A"), index);
    const b = await viewResource(
      { ...s, body: s.body.slice() },
      view("A"),
      indexGateways({ gateways: [gw("B", "192.0.2.1")] }),
    );
    expect(a.version).not.toBe(s.version);
    expect(b.version).toBe(a.version);
    expect(a).toMatchObject({ typeUrl: TypeUrl.endpoint, name: NAME, service: s.service });
    expect(summary(fromBinary(ClusterLoadAssignmentSchema, a.body))).toEqual([
      "z=2 10.0.0.1:8080 w1 istio/A 192.0.2.1:15443 w1 istio/B",
    ]);
    const other = await viewResource(s, view("B"), index);
    expect(other.version).not.toBe(a.version);
  });
});
