/**
 * ServiceEntries through the real ingest and a real flush (memory store, manual clock): the
 * Clusters and assignments published for STATIC, NONE and DNS resolution, decoded with
 * @grpc/grpc-js-xds's own cluster resource type (what it would NACK fails here) and checked against
 * Envoy's PGV rules; precedence when Kubernetes and ServiceEntries declare one host.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { ClusterResourceType } from "@grpc/grpc-js-xds/build/src/xds-resource-type/cluster-resource-type.js";
import type { XdsDecodeContext } from "@grpc/grpc-js-xds/build/src/xds-resource-type/xds-resource-type.js";
import { describe, expect, it } from "vitest";
import { type Cluster, ClusterSchema } from "../../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import type { StoredResource } from "../../../lib/resources/types.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/index.ts";
import { endpointSlice, event as ev, pod, service } from "../../e2e/support/kube.ts";
import { pgvViolations } from "../../support/pgv/index.ts";
import { createHarness } from "../ingest/support/harness.ts";
import { serviceEntry, workloadEntry } from "../ingest/support/istio.ts";

const decodeContext = { server: {}, bootstrap: { certificateProviders: {} } } as unknown as XdsDecodeContext;

type Harness = ReturnType<typeof createHarness>;

/** The published Cluster, decoded; checked against PGV and by grpc-js-xds's decoder. */
async function published(h: Harness, name: string): Promise<Cluster | undefined> {
  const stored = (await h.store.get<StoredResource>(keys.resource(TypeUrl.cluster, name)))?.value;
  if (!stored) return undefined;
  const c = fromBinary(ClusterSchema, stored.body);
  expect(pgvViolations(ClusterSchema, c), name).toEqual([]);
  const decoded = ClusterResourceType.get().decode(decodeContext, {
    type_url: TypeUrl.cluster,
    value: Buffer.from(stored.body),
  });
  expect(decoded.error, name).toBeUndefined();
  return c;
}

/** What a Cluster asks the client to do: `eds`, or `dns <host>:<port>`. */
function kindOf(c: Cluster | undefined): string | undefined {
  if (!c) return undefined;
  if (c.clusterDiscoveryType.case !== "type") return "other";
  if (c.clusterDiscoveryType.value === 3) return "eds"; // EDS
  const lb = c.loadAssignment?.endpoints[0]?.lbEndpoints[0];
  const addr = lb?.hostIdentifier.case === "endpoint" ? lb.hostIdentifier.value.address?.address : undefined;
  return addr?.case === "socketAddress" && addr.value.portSpecifier.case === "portValue"
    ? `dns ${addr.value.address}:${addr.value.portSpecifier.value}`
    : "dns ?";
}

const cluster = (host: string, port = 9080) => `outbound|${port}||${host}`;

describe("ServiceEntry generation", () => {
  const cases: {
    name: string;
    events: unknown[];
    host: string;
    cluster: string;
    served: string[] | undefined;
  }[] = [
    {
      name: "STATIC ▶ an EDS cluster with its endpoints",
      events: [ev("ADDED", serviceEntry("pay", { endpoints: [{ address: "10.1.0.1" }] }))],
      host: "pay.example.com",
      cluster: "eds",
      served: ["10.1.0.1"],
    },
    {
      name: "NONE ▶ what Istio's grpcgen does: an EDS cluster (with the workloads it selects)",
      events: [
        ev(
          "ADDED",
          serviceEntry("pay", { resolution: "NONE", workloadSelector: { labels: { app: "pay" } } }),
        ),
        ev("ADDED", workloadEntry("pay-a", { address: "10.1.0.3", labels: { app: "pay" } })),
      ],
      host: "pay.example.com",
      cluster: "eds",
      served: ["10.1.0.3"],
    },
    {
      name: "DNS without endpoints ▶ LOGICAL_DNS resolving the host on its port",
      events: [ev("ADDED", serviceEntry("localhost", { hosts: ["localhost"], resolution: "DNS" }))],
      host: "localhost",
      cluster: "dns localhost:9080",
      served: ["localhost"],
    },
    {
      name: "DNS with endpoints ▶ LOGICAL_DNS on the first, targetPort honoured",
      events: [
        ev(
          "ADDED",
          serviceEntry("pay", {
            resolution: "DNS",
            ports: [{ name: "grpc", number: 9080, targetPort: 7070 }],
            endpoints: [{ address: "b.pay.internal" }, { address: "a.pay.internal" }],
          }),
        ),
      ],
      host: "pay.example.com",
      cluster: "dns a.pay.internal:7070",
      served: ["a.pay.internal", "b.pay.internal"],
    },
    {
      name: "DNS with a selector and no WorkloadEntry ▶ the EDS cluster, empty (never an endpoint-less LOGICAL_DNS)",
      events: [
        ev("ADDED", serviceEntry("pay", { resolution: "DNS", workloadSelector: { labels: { app: "pay" } } })),
      ],
      host: "pay.example.com",
      cluster: "eds",
      served: [],
    },
    {
      name: "DNS with a selected WorkloadEntry ▶ LOGICAL_DNS on its address and ports map",
      events: [
        ev("ADDED", serviceEntry("pay", { resolution: "DNS", workloadSelector: { labels: { app: "pay" } } })),
        ev(
          "ADDED",
          workloadEntry("pay-a", { address: "10.2.0.1", labels: { app: "pay" }, ports: { grpc: 7000 } }),
        ),
      ],
      host: "pay.example.com",
      cluster: "dns 10.2.0.1:7000",
      served: ["10.2.0.1"],
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const h = createHarness();
      await h.ingest(...c.events);
      await h.settle();
      expect(kindOf(await published(h, cluster(c.host)))).toBe(c.cluster);
      expect((await h.served(c.host))?.map((e) => e.address)).toEqual(c.served);
      expect(await h.store.get(keys.resource(TypeUrl.listener, `${c.host}:9080`))).toBeDefined();
    });
  }

  it("a deleted ServiceEntry's resources are removed", async () => {
    const h = createHarness();
    await h.ingest(ev("ADDED", serviceEntry("pay", { endpoints: [{ address: "10.1.0.1" }] })));
    await h.settle();
    await h.ingest(ev("DELETED", serviceEntry("pay", {}, { resourceVersion: "2" })));
    await h.settle();
    expect(await published(h, cluster("pay.example.com"))).toBeUndefined();
    expect(await h.served("pay.example.com")).toBeUndefined();
  });
});

describe("precedence: one coherent set of resources per host", () => {
  const kubeHost = "pay.default.svc.cluster.local";
  const port = { name: "grpc", port: 9080 };
  const dnsEntry = (rv: string) =>
    serviceEntry("pay", { hosts: [kubeHost], resolution: "DNS" }, { resourceVersion: rv });

  it("Kubernetes first: the Service's EDS cluster, with the entry's endpoints joined; the entry once it is gone", async () => {
    const h = createHarness();
    await h.ingest(
      ev("ADDED", service("pay", "default", [port])),
      ev("ADDED", pod("pay", "default", "10.0.0.1")),
      ev("ADDED", endpointSlice("pay-1", "pay", "default", port, [{ ip: "10.0.0.1", ready: true }])),
      ev("ADDED", dnsEntry("1")),
    );
    await h.settle();
    expect(kindOf(await published(h, cluster(kubeHost)))).toBe("eds");
    // The entry's hostname endpoint is for a DNS cluster only: the EDS assignment carries IPs.
    expect((await h.served(kubeHost))?.map((e) => e.address)).toEqual(["10.0.0.1"]);

    await h.ingest(ev("DELETED", service("pay", "default", [port])));
    await h.settle();
    expect(kindOf(await published(h, cluster(kubeHost)))).toBe(`dns ${kubeHost}:9080`);
  });

  it("between ServiceEntries, the oldest wins: its ports are served", async () => {
    const h = createHarness();
    await h.ingest(
      ev(
        "ADDED",
        serviceEntry(
          "young",
          { hosts: ["pay.example.com"], ports: [{ name: "grpc", number: 9090 }] },
          { creationTimestamp: "2026-02-01T00:00:00Z" },
        ),
      ),
      ev(
        "ADDED",
        serviceEntry("old", { hosts: ["pay.example.com"] }, { creationTimestamp: "2026-01-01T00:00:00Z" }),
      ),
    );
    await h.settle();
    expect(await published(h, cluster("pay.example.com", 9080))).toBeDefined();
    expect(await published(h, cluster("pay.example.com", 9090))).toBeUndefined();
  });
});
