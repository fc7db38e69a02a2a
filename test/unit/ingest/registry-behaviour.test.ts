/** Kubernetes as Istio sees it, through ingest and flush: what a proxy is served after each kind of event. */
import { describe, expect, it } from "vitest";
import { createHarness } from "./support/harness.ts";
import { ev, namespace, node, pod, rv, service, slice } from "./support/kube.ts";

const host = "reviews.shop.svc.cluster.local";

describe("pods and nodes", () => {
  it("an endpoint whose pod has not arrived waits, and is served with the pod's identity when it does", async () => {
    const h = createHarness();
    await h.ingest(
      ev("ADDED", service("reviews", "shop")),
      ev("ADDED", slice("reviews-a", "reviews", "shop", [{ ip: "10.0.0.1", pod: "reviews-1", node: "n1" }])),
    );
    await h.settle();
    expect(await h.served(host)).toEqual([]);
    await h.ingest(
      ev("ADDED", node("n1", "eu-west1", "eu-west1-b")),
      ev(
        "ADDED",
        pod("reviews-1", "shop", "10.0.0.1", {
          node: "n1",
          sa: "bookinfo-reviews",
          labels: { version: "v2" },
        }),
      ),
    );
    const [push] = await h.settle();
    // The shard appears with its first endpoint: a service never seen before, a full push, as Istio.
    expect(push?.request?.full).toBe(true);
    expect(await h.served(host)).toEqual([
      { address: "10.0.0.1", health: "HEALTHY", locality: "eu-west1/eu-west1-b/" },
    ]);
    const [endpoint] = Object.values((await h.shards("shop", host)) ?? {}).flat();
    expect(endpoint?.serviceAccount).toBe("spiffe://cluster.local/ns/shop/sa/bookinfo-reviews");
    expect(endpoint?.labels).toMatchObject({
      app: "x",
      version: "v2",
      "topology.kubernetes.io/region": "eu-west1",
    });
  });

  it("a pod's istio-locality label wins over its node", async () => {
    const h = createHarness();
    await h.ingest(
      ev("ADDED", node("n1", "eu-west1", "eu-west1-b")),
      ev(
        "ADDED",
        pod("reviews-1", "shop", "10.0.0.1", { node: "n1", labels: { "istio-locality": "us.us-a.rack7" } }),
      ),
      ev("ADDED", service("reviews", "shop")),
      ev("ADDED", slice("reviews-a", "reviews", "shop", [{ ip: "10.0.0.1", pod: "reviews-1", node: "n1" }])),
    );
    await h.settle();
    expect((await h.served(host))?.map((e) => e.locality)).toEqual(["us/us-a/rack7"]);
  });

  it("a node that changes zone moves its endpoints' locality, an incremental push", async () => {
    const h = createHarness();
    await h.ingest(
      ev("ADDED", node("n1", "eu-west1", "eu-west1-b")),
      ev("ADDED", pod("reviews-1", "shop", "10.0.0.1", { node: "n1" })),
      ev("ADDED", service("reviews", "shop")),
      ev("ADDED", slice("reviews-a", "reviews", "shop", [{ ip: "10.0.0.1", pod: "reviews-1", node: "n1" }])),
    );
    await h.settle();
    await h.ingest(ev("MODIFIED", node("n1", "eu-west1", "eu-west1-c")));
    const [push] = await h.settle();
    expect(push?.request).toMatchObject({ full: false, reasons: { endpoint: 1 } });
    expect((await h.served(host))?.map((e) => e.locality)).toEqual(["eu-west1/eu-west1-c/"]);
  });

  it("an endpoint without a targetRef finds its pod by IP", async () => {
    const h = createHarness();
    await h.ingest(
      ev("ADDED", pod("reviews-1", "shop", "10.0.0.9", { sa: "by-ip" })),
      ev("ADDED", service("reviews", "shop")),
      ev("ADDED", slice("reviews-a", "reviews", "shop", [{ ip: "10.0.0.9" }])),
    );
    await h.settle();
    const [endpoint] = Object.values((await h.shards("shop", host)) ?? {}).flat();
    expect(endpoint?.serviceAccount).toBe("spiffe://cluster.local/ns/shop/sa/by-ip");
  });
});

describe("health", () => {
  const endpoints = [
    { ip: "10.0.0.1", ready: true },
    { ip: "10.0.0.2", ready: false, serving: false, terminating: false },
    { ip: "10.0.0.3", ready: false, serving: false, terminating: true },
  ];
  it("serves only ready endpoints by default", async () => {
    const h = createHarness();
    await h.ingest(
      ev("ADDED", service("reviews", "shop")),
      ev("ADDED", slice("s", "reviews", "shop", endpoints)),
    );
    await h.settle();
    expect((await h.served(host))?.map((e) => `${e.address} ${e.health}`)).toEqual(["10.0.0.1 HEALTHY"]);
  });
  it("PILOT_SEND_UNHEALTHY_ENDPOINTS serves not-ready ones as UNHEALTHY, never terminating ones", async () => {
    const h = createHarness({ sendUnhealthy: true });
    await h.ingest(
      ev("ADDED", service("reviews", "shop")),
      ev("ADDED", slice("s", "reviews", "shop", endpoints)),
    );
    await h.settle();
    expect((await h.served(host))?.map((e) => `${e.address} ${e.health}`)).toEqual([
      "10.0.0.1 HEALTHY",
      "10.0.0.2 UNHEALTHY",
    ]);
  });
  it("publishNotReadyAddresses serves every address as healthy", async () => {
    const h = createHarness();
    await h.ingest(
      ev("ADDED", service("reviews", "shop", { publishNotReady: true })),
      ev("ADDED", slice("s", "reviews", "shop", endpoints.slice(0, 2))),
    );
    await h.settle();
    expect((await h.served(host))?.map((e) => `${e.address} ${e.health}`)).toEqual([
      "10.0.0.1 HEALTHY",
      "10.0.0.2 HEALTHY",
    ]);
  });
});

describe("headless services", () => {
  it("an endpoint change is a full push, as Istio does", async () => {
    const h = createHarness();
    await h.ingest(
      ev("ADDED", service("reviews", "shop", { headless: true })),
      ev("ADDED", slice("s", "reviews", "shop", [{ ip: "10.0.0.1" }])),
    );
    await h.settle();
    await h.ingest(ev("MODIFIED", slice("s", "reviews", "shop", [{ ip: "10.0.0.2" }])));
    const [push] = await h.settle();
    expect(push?.request?.full).toBe(true);
  });
});

describe("v1 Endpoints mode", () => {
  const endpointsObject = (ip: string) => ({
    apiVersion: "v1",
    kind: "Endpoints",
    metadata: { name: "reviews", namespace: "shop", resourceVersion: rv() },
    subsets: [
      {
        addresses: [{ ip }],
        notReadyAddresses: [{ ip: "10.9.9.9" }],
        ports: [{ name: "grpc", port: 9080, protocol: "TCP" }],
      },
    ],
  });
  it("takes endpoints from v1 Endpoints and ignores slices when PILOT_USE_ENDPOINT_SLICE=false", async () => {
    const h = createHarness({ useEndpointSlice: false });
    const s = await h.ingest(
      ev("ADDED", service("reviews", "shop")),
      ev("ADDED", endpointsObject("10.0.0.7")),
      ev("ADDED", slice("s", "reviews", "shop", [{ ip: "10.0.0.1" }])),
    );
    expect(s.ignored).toEqual({ EndpointSlice: 1 });
    await h.settle();
    expect((await h.served(host))?.map((e) => e.address)).toEqual(["10.0.0.7"]);
  });
  it("ignores v1 Endpoints by default", async () => {
    const h = createHarness();
    const s = await h.ingest(ev("ADDED", endpointsObject("10.0.0.7")));
    expect(s.ignored).toEqual({ Endpoints: 1 });
  });
});

describe("discovery selectors", () => {
  const selectors = [{ matchLabels: { "istio-discovery": "enabled" } }];
  it("serves a namespace only once it matches, and removes its services when it stops", async () => {
    const h = createHarness({ discoverySelectors: selectors });
    await h.ingest(
      ev("ADDED", namespace("shop", {})),
      ev("ADDED", service("reviews", "shop")),
      ev("ADDED", slice("s", "reviews", "shop", [{ ip: "10.0.0.1" }])),
    );
    await h.settle();
    expect(await h.served(host)).toBeUndefined();

    await h.ingest(ev("MODIFIED", namespace("shop", { "istio-discovery": "enabled" })));
    const [added] = await h.settle();
    expect(added?.request).toMatchObject({ full: true, configsUpdated: [`ServiceEntry/shop/${host}`] });
    expect((await h.served(host))?.map((e) => e.address)).toEqual(["10.0.0.1"]);

    await h.ingest(ev("MODIFIED", namespace("shop", { "istio-discovery": "disabled" })));
    const [removed] = await h.settle();
    expect(removed?.changes.every((c) => c.version === null)).toBe(true);
    expect(await h.served(host)).toBeUndefined();
  });
  it("a namespace whose labels change without changing its selection pushes nothing", async () => {
    const h = createHarness({ discoverySelectors: selectors });
    await h.ingest(
      ev("ADDED", namespace("shop", { "istio-discovery": "enabled" })),
      ev("ADDED", service("reviews", "shop")),
    );
    await h.settle();
    const s = await h.ingest(ev("MODIFIED", namespace("shop", { "istio-discovery": "enabled", team: "a" })));
    expect(s.push).toBeNull();
  });
});

describe("multi-cluster", () => {
  it("serves one service with both clusters' endpoints; deleting it in one keeps the other", async () => {
    const h = createHarness();
    const ingestFor = h.ingestAs;
    await ingestFor(
      "east",
      ev("ADDED", service("reviews", "shop")),
      ev("ADDED", slice("s", "reviews", "shop", [{ ip: "10.1.0.1" }])),
    );
    await ingestFor(
      "west",
      ev("ADDED", service("reviews", "shop")),
      ev("ADDED", slice("s", "reviews", "shop", [{ ip: "10.2.0.1" }])),
    );
    await h.settle();
    expect((await h.served(host))?.map((e) => e.address)).toEqual(["10.1.0.1", "10.2.0.1"]);
    await ingestFor("west", ev("DELETED", service("reviews", "shop")));
    await h.settle();
    expect((await h.served(host))?.map((e) => e.address)).toEqual(["10.1.0.1"]);
  });
});
