import { describe, expect, it } from "vitest";
import { endpointsObjectEndpoints, endpointsObjectPiece } from "../../../../lib/registry/kube/endpoints.ts";
import type { RawEndpoint } from "../../../../lib/registry/kube/records.ts";
import type { EndpointSubset, KubeEndpoints } from "../../../../lib/registry/kube/types.ts";
import { loadKubeFixture } from "../../../fixtures/kube/load.ts";
import { endpointsObject } from "./builders.ts";

const READY = { ready: true, serving: true, terminating: false };
const NOT_READY = { ready: false, serving: false, terminating: false };

const rawOf = (o: Partial<RawEndpoint> = {}): RawEndpoint => ({
  address: "10.0.0.1",
  port: 80,
  servicePortName: "http",
  conditions: READY,
  nodeName: "",
  zone: "",
  zoneHints: [],
  ...o,
});

describe("endpointsObjectEndpoints on the API server fixture", () => {
  it("addresses ready, notReadyAddresses neither ready nor serving, × every port, sorted", () => {
    const v1 = { nodeName: "worker-a", pod: { namespace: "bookinfo", name: "reviews-v1-7d9f8c6b5-x2k4p" } };
    const v2 = { nodeName: "worker-b", pod: { namespace: "bookinfo", name: "reviews-v2-5b8d7f9c4-q7w2m" } };
    expect(endpointsObjectEndpoints(loadKubeFixture<KubeEndpoints>("endpoints-v1.json"))).toEqual([
      rawOf({ address: "10.244.1.12", port: 8080, servicePortName: "web", ...v1 }),
      rawOf({ address: "10.244.1.12", port: 9080, servicePortName: "grpc", ...v1 }),
      rawOf({ address: "10.244.2.7", port: 8080, servicePortName: "web", conditions: NOT_READY, ...v2 }),
      rawOf({ address: "10.244.2.7", port: 9080, servicePortName: "grpc", conditions: NOT_READY, ...v2 }),
    ]);
  });

  it("the piece feeds the service named like the Endpoints object", () => {
    const obj = loadKubeFixture<KubeEndpoints>("endpoints-v1.json");
    expect(endpointsObjectPiece(obj)).toEqual({
      serviceName: "reviews",
      endpoints: endpointsObjectEndpoints(obj),
    });
  });
});

describe("endpointsObjectEndpoints shapes", () => {
  const port = { name: "http", port: 80, protocol: "TCP" as const };
  const cases: { name: string; in: EndpointSubset[] | null; want: RawEndpoint[] }[] = [
    { name: "no subsets field (a service without endpoints)", in: null, want: [] },
    { name: "subsets without ports", in: [{ addresses: [{ ip: "10.0.0.1" }] }], want: [] },
    { name: "subsets without addresses", in: [{ ports: [port] }], want: [] },
    {
      name: "hostname, nodeName and a Pod targetRef without namespace (▶ the Endpoints' namespace)",
      in: [
        {
          addresses: [
            { ip: "10.0.0.1", hostname: "db-0", nodeName: "n1", targetRef: { kind: "Pod", name: "db-0" } },
          ],
          ports: [port],
        },
      ],
      want: [rawOf({ hostname: "db-0", nodeName: "n1", pod: { namespace: "bookinfo", name: "db-0" } })],
    },
    {
      name: "a targetRef of another kind names no pod",
      in: [{ addresses: [{ ip: "10.0.0.1", targetRef: { kind: "Node", name: "n1" } }], ports: [port] }],
      want: [rawOf()],
    },
    {
      name: "an unnamed single port ▶ servicePortName ''",
      in: [{ addresses: [{ ip: "10.0.0.1" }], ports: [{ port: 80 }] }],
      want: [rawOf({ servicePortName: "" })],
    },
    {
      name: "several subsets are combined and sorted",
      in: [
        { addresses: [{ ip: "10.0.0.9" }], ports: [port] },
        { addresses: [{ ip: "10.0.0.1" }], notReadyAddresses: [{ ip: "10.0.0.5" }], ports: [port] },
      ],
      want: [rawOf(), rawOf({ address: "10.0.0.5", conditions: NOT_READY }), rawOf({ address: "10.0.0.9" })],
    },
    {
      name: "an address both ready and not ready (two subsets) counts as ready",
      in: [
        { notReadyAddresses: [{ ip: "10.0.0.1" }], ports: [port] },
        { addresses: [{ ip: "10.0.0.1" }], ports: [port] },
      ],
      want: [rawOf()],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(endpointsObjectEndpoints(endpointsObject(c.in))).toEqual(c.want);
    });
  }

  it("the output shares no condition objects (safe to mutate)", () => {
    const got = endpointsObjectEndpoints(
      endpointsObject([{ addresses: [{ ip: "10.0.0.1" }, { ip: "10.0.0.2" }], ports: [port] }]),
    );
    got[0]!.conditions.ready = false;
    expect(got[1]!.conditions.ready).toBe(true);
    expect(
      endpointsObjectEndpoints(endpointsObject([{ addresses: [{ ip: "10.0.0.3" }], ports: [port] }]))[0]!
        .conditions.ready,
    ).toBe(true);
  });
});
