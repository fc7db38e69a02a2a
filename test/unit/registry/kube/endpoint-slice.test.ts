import { describe, expect, it } from "vitest";
import type { Endpoint } from "../../../../lib/model/index.ts";
import { convertEndpointSlice, endpointHealth } from "../../../../lib/registry/kube/endpoint-slice.ts";
import type { EndpointConditions, EndpointSlice } from "../../../../lib/registry/kube/types.ts";
import { loadKubeFixture } from "../../../fixtures/kube/load.ts";
import { slice, sliceEndpoint } from "./builders.ts";

const opts = { clusterId: "east" };

const endpoint = (o: Partial<Endpoint> = {}): Endpoint => ({
  address: "10.244.0.5",
  port: 9080,
  servicePortName: "grpc",
  labels: {},
  locality: { region: "", zone: "zone-a", subzone: "" },
  serviceAccount: "",
  health: "HEALTHY",
  ...o,
});

describe("convertEndpointSlice on API server fixtures", () => {
  it("IPv4 slice: the ready endpoint on every port, the not-ready one left out", () => {
    const got = convertEndpointSlice(loadKubeFixture<EndpointSlice>("endpointslice-ipv4.json"), opts);
    const zoneA = { region: "", zone: "us-east-1a", subzone: "" };
    expect(got).toEqual([
      endpoint({ address: "10.244.1.12", port: 8080, servicePortName: "web", locality: zoneA }),
      endpoint({ address: "10.244.1.12", port: 9080, servicePortName: "grpc", locality: zoneA }),
    ]);
  });

  it("IPv6 slice", () => {
    const got = convertEndpointSlice(loadKubeFixture<EndpointSlice>("endpointslice-ipv6.json"), opts);
    expect(got).toEqual([
      endpoint({ address: "fd00:10:244:1::c", locality: { region: "", zone: "us-east-1a", subzone: "" } }),
    ]);
  });

  it("FQDN slice contributes nothing", () => {
    expect(convertEndpointSlice(loadKubeFixture<EndpointSlice>("endpointslice-fqdn.json"), opts)).toEqual([]);
  });

  it("a slice the API server sends with null endpoints and ports contributes nothing", () => {
    expect(convertEndpointSlice(loadKubeFixture<EndpointSlice>("endpointslice-empty.json"), opts)).toEqual(
      [],
    );
  });
});

describe("convertEndpointSlice shapes", () => {
  const grpc = { name: "grpc", port: 9080, protocol: "TCP" as const };
  const cases: { name: string; in: EndpointSlice; want: Endpoint[] }[] = [
    {
      name: "ready missing counts as ready",
      in: slice({ endpoints: [sliceEndpoint({ conditions: {} })], ports: [grpc] }),
      want: [endpoint()],
    },
    {
      name: "conditions missing counts as ready",
      in: slice({ endpoints: [sliceEndpoint({ conditions: undefined })], ports: [grpc] }),
      want: [endpoint()],
    },
    {
      name: "serving but terminating (not ready) is left out for now",
      in: slice({
        endpoints: [sliceEndpoint({ conditions: { ready: false, serving: true, terminating: true } })],
        ports: [grpc],
      }),
      want: [],
    },
    {
      name: "only the first of several addresses",
      in: slice({ endpoints: [sliceEndpoint({ addresses: ["10.244.0.5", "10.244.0.6"] })], ports: [grpc] }),
      want: [endpoint()],
    },
    {
      name: "an endpoint without addresses is skipped",
      in: slice({ endpoints: [sliceEndpoint({ addresses: [] })], ports: [grpc] }),
      want: [],
    },
    {
      name: "unnamed port ▶ servicePortName ''",
      in: slice({ endpoints: [sliceEndpoint()], ports: [{ port: 80, protocol: "TCP" }] }),
      want: [endpoint({ port: 80, servicePortName: "" })],
    },
    {
      name: "a port without a number is skipped",
      in: slice({ endpoints: [sliceEndpoint()], ports: [{ name: "any" }, grpc] }),
      want: [endpoint()],
    },
    {
      name: "no zone ▶ empty locality",
      in: slice({ endpoints: [sliceEndpoint({ zone: undefined })], ports: [grpc] }),
      want: [endpoint({ locality: { region: "", zone: "", subzone: "" } })],
    },
    {
      name: "sorted by address, port, port name whatever the input order",
      in: slice({
        endpoints: [sliceEndpoint({ addresses: ["10.0.0.9"] }), sliceEndpoint({ addresses: ["10.0.0.1"] })],
        ports: [grpc, { name: "admin", port: 15000 }],
      }),
      want: [
        endpoint({ address: "10.0.0.1" }),
        endpoint({ address: "10.0.0.1", port: 15000, servicePortName: "admin" }),
        endpoint({ address: "10.0.0.9" }),
        endpoint({ address: "10.0.0.9", port: 15000, servicePortName: "admin" }),
      ],
    },
    {
      name: "the same address twice in one slice appears once",
      in: slice({ endpoints: [sliceEndpoint(), sliceEndpoint({ nodeName: "worker-z" })], ports: [grpc] }),
      want: [endpoint()],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(convertEndpointSlice(c.in, opts)).toEqual(c.want);
    });
  }

  it("does not depend on the order of endpoints or ports", () => {
    const a = slice({
      endpoints: [
        sliceEndpoint({ addresses: ["10.0.0.2"] }),
        sliceEndpoint({ addresses: ["10.0.0.1"], zone: "z" }),
      ],
      ports: [grpc, { name: "web", port: 8080 }],
    });
    const b = { ...a, endpoints: [...(a.endpoints ?? [])].reverse(), ports: [...(a.ports ?? [])].reverse() };
    expect(convertEndpointSlice(b, opts)).toEqual(convertEndpointSlice(a, opts));
  });
});

describe("endpointHealth", () => {
  const cases: { in: EndpointConditions | undefined; want: Endpoint["health"] }[] = [
    { in: undefined, want: "HEALTHY" },
    { in: {}, want: "HEALTHY" },
    { in: { ready: true }, want: "HEALTHY" },
    { in: { ready: false }, want: "UNHEALTHY" },
    { in: { ready: false, serving: true, terminating: true }, want: "UNHEALTHY" },
  ];
  for (const c of cases) {
    it(`${JSON.stringify(c.in)} ▶ ${c.want}`, () => {
      expect(endpointHealth(c.in)).toBe(c.want);
    });
  }
});
