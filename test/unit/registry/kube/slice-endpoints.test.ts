import { describe, expect, it } from "vitest";
import { sliceEndpoints, slicePiece } from "../../../../lib/registry/kube/endpoint-slice.ts";
import type { RawConditions, RawEndpoint } from "../../../../lib/registry/kube/records.ts";
import type { EndpointConditions, EndpointSlice } from "../../../../lib/registry/kube/types.ts";
import { loadKubeFixture } from "../../../fixtures/kube/load.ts";
import { slice, sliceEndpoint } from "./builders.ts";

const READY: RawConditions = { ready: true, serving: true, terminating: false };
const grpc = { name: "grpc", port: 9080, protocol: "TCP" as const };

/** What sliceEndpoint() becomes on the grpc port; override anything. */
const rawOf = (o: Partial<RawEndpoint> = {}): RawEndpoint => ({
  address: "10.244.0.5",
  port: 9080,
  servicePortName: "grpc",
  conditions: READY,
  nodeName: "worker-a",
  zone: "zone-a",
  zoneHints: [],
  ...o,
});

describe("sliceEndpoints on API server fixtures", () => {
  it("IPv4 slice: every endpoint × every port, not-ready ones too, sorted", () => {
    const r1 = { namespace: "bookinfo", name: "reviews-v1-7d9f8c6b5-x2k4p" };
    const r2 = { namespace: "bookinfo", name: "reviews-v2-5b8d7f9c4-q7w2m" };
    const notReady = { ready: false, serving: false, terminating: false };
    const a = { address: "10.244.1.12", nodeName: "worker-a", zone: "us-east-1a", pod: r1 };
    const b = {
      address: "10.244.2.7",
      nodeName: "worker-b",
      zone: "us-east-1b",
      conditions: notReady,
      pod: r2,
    };
    expect(sliceEndpoints(loadKubeFixture<EndpointSlice>("endpointslice-ipv4.json"))).toEqual([
      rawOf({ ...a, port: 8080, servicePortName: "web" }),
      rawOf({ ...a }),
      rawOf({ ...b, port: 8080, servicePortName: "web" }),
      rawOf({ ...b }),
    ]);
  });

  it("IPv6 slice", () => {
    expect(sliceEndpoints(loadKubeFixture<EndpointSlice>("endpointslice-ipv6.json"))).toEqual([
      rawOf({
        address: "fd00:10:244:1::c",
        zone: "us-east-1a",
        pod: { namespace: "bookinfo", name: "reviews-v1-7d9f8c6b5-x2k4p" },
      }),
    ]);
  });

  it("serving and terminating endpoints keep their conditions, zone hints and hostnames", () => {
    const got = sliceEndpoints(loadKubeFixture<EndpointSlice>("endpointslice-terminating.json"));
    const at = (address: string, hostname: string, zone: string, conditions: RawConditions) =>
      rawOf({
        address,
        port: 9080,
        servicePortName: "http",
        conditions,
        nodeName: zone === "us-east-1a" ? "worker-a" : "worker-c",
        zone,
        zoneHints: [zone],
        hostname,
        pod: { namespace: "bookinfo", name: hostname },
      });
    expect(got).toEqual([
      at("10.244.1.30", "ratings-2", "us-east-1a", READY),
      at("10.244.3.21", "ratings-0", "us-east-1b", { ready: false, serving: true, terminating: true }),
      at("10.244.3.9", "ratings-1", "us-east-1b", { ready: false, serving: false, terminating: true }),
    ]);
  });

  it("FQDN slice ▶ []", () => {
    expect(sliceEndpoints(loadKubeFixture<EndpointSlice>("endpointslice-fqdn.json"))).toEqual([]);
  });

  it("null endpoints and ports ▶ []", () => {
    expect(sliceEndpoints(loadKubeFixture<EndpointSlice>("endpointslice-empty.json"))).toEqual([]);
  });
});

describe("sliceEndpoints conditions", () => {
  const cases: { in: EndpointConditions | undefined; want: RawConditions }[] = [
    { in: undefined, want: READY },
    { in: {}, want: READY },
    { in: { ready: false }, want: { ready: false, serving: true, terminating: false } },
    { in: { serving: false }, want: { ready: true, serving: false, terminating: false } },
    { in: { terminating: true }, want: { ready: true, serving: true, terminating: true } },
    {
      in: { ready: false, serving: false, terminating: true },
      want: { ready: false, serving: false, terminating: true },
    },
  ];
  for (const c of cases) {
    it(`${JSON.stringify(c.in)} ▶ ${JSON.stringify(c.want)}`, () => {
      const got = sliceEndpoints(slice({ endpoints: [sliceEndpoint({ conditions: c.in })], ports: [grpc] }));
      expect(got).toEqual([rawOf({ conditions: c.want })]);
    });
  }
});

describe("sliceEndpoints shapes", () => {
  const cases: { name: string; in: EndpointSlice; want: RawEndpoint[] }[] = [
    {
      name: "targetRef Pod with its own namespace",
      in: slice({
        endpoints: [sliceEndpoint({ targetRef: { kind: "Pod", name: "p", namespace: "other" } })],
        ports: [grpc],
      }),
      want: [rawOf({ pod: { namespace: "other", name: "p" } })],
    },
    {
      name: "targetRef Pod without namespace ▶ the slice's namespace",
      in: slice({ endpoints: [sliceEndpoint({ targetRef: { kind: "Pod", name: "p" } })], ports: [grpc] }),
      want: [rawOf({ pod: { namespace: "bookinfo", name: "p" } })],
    },
    {
      name: "targetRef of another kind ▶ no pod",
      in: slice({
        endpoints: [sliceEndpoint({ targetRef: { kind: "Node", name: "worker-a" } })],
        ports: [grpc],
      }),
      want: [rawOf()],
    },
    {
      name: "no nodeName, zone or hints ▶ empty values",
      in: slice({ endpoints: [{ addresses: ["10.244.0.5"] }], ports: [grpc] }),
      want: [rawOf({ nodeName: "", zone: "" })],
    },
    {
      name: "zone hints sorted and unique; node hints ignored",
      in: slice({
        endpoints: [
          sliceEndpoint({
            hints: {
              forZones: [{ name: "z-b" }, { name: "z-a" }, { name: "z-b" }],
              forNodes: [{ name: "n" }],
            },
          }),
        ],
        ports: [grpc],
      }),
      want: [rawOf({ zoneHints: ["z-a", "z-b"] })],
    },
    {
      name: "only the first of several addresses",
      in: slice({ endpoints: [sliceEndpoint({ addresses: ["10.244.0.5", "10.244.0.6"] })], ports: [grpc] }),
      want: [rawOf()],
    },
    {
      name: "an endpoint without addresses is skipped",
      in: slice({ endpoints: [sliceEndpoint({ addresses: [] })], ports: [grpc] }),
      want: [],
    },
    {
      name: "unnamed port ▶ servicePortName ''; a port without a number is skipped",
      in: slice({ endpoints: [sliceEndpoint()], ports: [{ port: 80, protocol: "TCP" }, { name: "any" }] }),
      want: [rawOf({ port: 80, servicePortName: "" })],
    },
    {
      name: "one address listed twice: the readier entry wins whatever the order",
      in: slice({
        endpoints: [
          sliceEndpoint({ conditions: { ready: false, serving: true, terminating: true }, nodeName: "old" }),
          sliceEndpoint(),
        ],
        ports: [grpc],
      }),
      want: [rawOf()],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(sliceEndpoints(c.in)).toEqual(c.want);
    });
  }

  it("does not depend on the order of endpoints, ports or hints", () => {
    const a = loadKubeFixture<EndpointSlice>("endpointslice-terminating.json");
    const b = loadKubeFixture<EndpointSlice>("endpointslice-terminating.json");
    b.endpoints?.reverse();
    b.ports = [{ name: "admin", port: 15000 }, ...(b.ports ?? [])];
    a.ports = [...(a.ports ?? []), { name: "admin", port: 15000 }];
    expect(JSON.stringify(sliceEndpoints(b))).toBe(JSON.stringify(sliceEndpoints(a)));
  });
});

describe("slicePiece", () => {
  it("names the service from the kubernetes.io/service-name label", () => {
    const obj = loadKubeFixture<EndpointSlice>("endpointslice-terminating.json");
    expect(slicePiece(obj)).toEqual({ serviceName: "ratings", endpoints: sliceEndpoints(obj) });
  });

  it("a slice without the label feeds no service", () => {
    expect(slicePiece(slice({}, { labels: { app: "reviews" } }))).toBeUndefined();
  });
});
