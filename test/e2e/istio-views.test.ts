/**
 * Per-namespace views through the real Node runtime, observed through calls of real proxyless gRPC
 * clients (grpc-js-xds, one xDS client and node per channel) to real backends on 127.0.0.x: a
 * VirtualService exported to "." routes its own namespace's proxies by header while another
 * namespace's proxy takes the default route; a Sidecar whose egress hosts leave a service out makes
 * it not exist for that namespace's proxy while a proxy of another namespace still calls it; a
 * Sidecar imports only the VirtualServices its egress hosts name (a hidden one does not route its
 * namespace), and the services an imported one routes to even when its egress hosts leave them out.
 */
import { fromBinary } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeltaPollService } from "../../lib/gen/edgepilot/xds/v1/poll_pb.ts";
import { RouteConfigurationSchema } from "../../lib/gen/envoy/config/route/v3/route_pb.ts";
import { RouteDiscoveryService } from "../../lib/gen/envoy/service/route/v3/rds_pb.ts";
import { TypeUrl } from "../../lib/resources/xds-types.ts";
import { destinationRule, virtualService } from "../unit/ingest/support/istio.ts";
import { transports } from "./poll/support.ts";
import { type Backend, startBackend } from "./support/backends.ts";
import { post, until } from "./support/converge.ts";
import { endpointSlice, event, pod, service } from "./support/kube.ts";
import { freePort, type RunningControlPlane, startControlPlane } from "./support/runtime.ts";
import { registerXdsPerChannel, type WhoClient, whoClient, xdsBootstrap } from "./support/xds-client.ts";

const reviews = "xds:///reviews.default.svc.cluster.local:9080";
const ratings = "xds:///ratings.shop.svc.cluster.local:9080";
const jason = { "x-user": "jason" };
const node = (ns: string) => `sidecar~127.0.0.9~client.${ns}~${ns}.svc.cluster.local`;

let cp: RunningControlPlane;
let backends: Backend[] = [];
const clients: WhoClient[] = [];
/** A client of `target` whose node is a proxy of namespace `ns`. */
const clientIn = (ns: string, target: string) => {
  const c = whoClient(target, xdsBootstrap(cp.xdsPort, node(ns)));
  clients.push(c);
  return c;
};

const versioned = (name: string, ns: string, ip: string, version: string) => {
  const p = pod(name, ns, ip);
  return event("ADDED", { ...p, metadata: { ...p.metadata, labels: { app: name, version } } });
};

const sidecar = (spec: Record<string, unknown>, rv: string, namespace = "other") => ({
  apiVersion: "networking.istio.io/v1",
  kind: "Sidecar",
  metadata: { name: "default", namespace, resourceVersion: rv },
  spec,
});

beforeAll(async () => {
  const port = await freePort();
  backends = [
    await startBackend("a", "127.0.0.1", port),
    await startBackend("b", "127.0.0.2", port),
    await startBackend("c", "127.0.0.3", port),
  ];
  cp = await startControlPlane({ PILOT_DEBOUNCE_AFTER: "10ms" });
  await post(
    cp,
    versioned("reviews", "default", "127.0.0.1", "v1"),
    versioned("reviews", "default", "127.0.0.2", "v2"),
    versioned("ratings", "shop", "127.0.0.3", "v1"),
    event("ADDED", service("reviews", "default", [{ name: "grpc", port: 9080 }])),
    event("ADDED", service("ratings", "shop", [{ name: "grpc", port: 9080 }])),
    event(
      "ADDED",
      endpointSlice("reviews-1", "reviews", "default", { name: "grpc", port }, [
        { ip: "127.0.0.1", ready: true },
        { ip: "127.0.0.2", ready: true },
      ]),
    ),
    event(
      "ADDED",
      endpointSlice("ratings-1", "ratings", "shop", { name: "grpc", port }, [
        { ip: "127.0.0.3", ready: true },
      ]),
    ),
  );
  registerXdsPerChannel();
});

afterAll(async () => {
  for (const c of clients) c.close();
  await cp?.stop();
  await Promise.all(backends.map((b) => b.stop()));
});

describe("per-namespace views for proxyless gRPC", () => {
  it('a VirtualService exported to "." routes its namespace by header; another namespace takes the default route', async () => {
    const own = clientIn("default", reviews);
    const other = clientIn("other", reviews);
    const at = await post(
      cp,
      event(
        "ADDED",
        destinationRule("reviews", [
          { name: "v1", labels: { version: "v1" } },
          { name: "v2", labels: { version: "v2" } },
        ]),
      ),
      event(
        "ADDED",
        virtualService(
          "reviews",
          {
            exportTo: ["."],
            http: [
              {
                match: [{ headers: { "x-user": { exact: "jason" } } }],
                route: [{ destination: { host: "reviews", subset: "v2" } }],
              },
              { route: [{ destination: { host: "reviews", subset: "v1" } }] },
            ],
          },
          { resourceVersion: "100" },
        ),
      ),
    );
    await until(cp, own, at, {
      accept: (a) => a === "b",
      what: "v2 for x-user: jason in default",
      headers: jason,
    });
    await until(cp, own, at, { accept: (a) => a === "a", what: "v1 without the header in default" });
    // The proxy of namespace other has the shared default route: both endpoints, header or not.
    await until(cp, other, at, { accept: (a) => a === "a" || a === "b", what: "the default route in other" });
    const seen = new Set<string>();
    for (let i = 0; i < 30; i++) seen.add(await other.who(1000, jason));
    expect([...seen].sort()).toEqual(["a", "b"]);
    for (let i = 0; i < 10; i++) expect(await own.who(1000, jason)).toBe("b");
  });

  it("Fetch, REST-JSON and Poll answer through the view of the node they name", async () => {
    const name = "reviews.default.svc.cluster.local:9080";
    const routes = (bytes: Uint8Array | undefined) =>
      bytes ? fromBinary(RouteConfigurationSchema, bytes).virtualHosts[0]?.routes.length : undefined;
    const h2c = transports(cp)["h2c binary"];
    if (!h2c) throw new Error("no h2c transport");
    const fetchRoutes = createClient(RouteDiscoveryService, h2c).fetchRoutes;
    const poll = createClient(DeltaPollService, h2c).poll;
    // The header route and the default route in default; the shared default route elsewhere.
    for (const [ns, want] of [
      ["default", 2],
      ["other", 1],
    ] as const) {
      const fetched = await fetchRoutes({
        node: { id: node(ns), metadata: { GENERATOR: "grpc" } },
        resourceNames: [name],
      });
      expect(routes(fetched.resources[0]?.value), `Fetch ${ns}`).toBe(want);
      const polled = await poll({
        request: {
          typeUrl: TypeUrl.route,
          node: { id: node(ns), metadata: { GENERATOR: "grpc" } },
          resourceNamesSubscribe: [name],
        },
      });
      expect(routes(polled.resources[0]?.resource?.value), `Poll ${ns}`).toBe(want);
      const rest = await fetch(`http://127.0.0.1:${cp.port}/v3/discovery:routes`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          node: { id: node(ns), metadata: { GENERATOR: "grpc" } },
          resource_names: [name],
        }),
      });
      const json = (await rest.json()) as { resources: { virtualHosts: { routes: unknown[] }[] }[] };
      expect(json.resources[0]?.virtualHosts[0]?.routes.length, `REST ${ns}`).toBe(want);
    }
  });

  it("a Sidecar whose egress leaves a service out makes it not exist there; other namespaces still call it", async () => {
    const fromDefault = clientIn("default", ratings);
    const fromOther = clientIn("other", ratings);
    for (const c of [fromDefault, fromOther])
      await until(cp, c, Date.now(), { accept: (a) => a === "c", what: "ratings before the Sidecar" });
    const at = await post(
      cp,
      event("ADDED", sidecar({ egress: [{ hosts: ["./*", "istio-system/*"] }] }, "200")),
    );
    await until(cp, fromOther, at, {
      accept: (a) => a === "error:14",
      what: "ratings UNAVAILABLE for the proxy of namespace other",
    });
    for (let i = 0; i < 10; i++) expect(await fromDefault.who(1000)).toBe("c");
    // Egress widened to shop: the service exists again for namespace other. A new channel shows it:
    // grpc-js-xds 1.14 keeps a deleted Listener cached and ignores the same one sent again, so the
    // channel that saw it removed stays failed (xds-client.js: resourcesEqual with cachedResource).
    const widened = await post(
      cp,
      event("MODIFIED", sidecar({ egress: [{ hosts: ["./*", "shop/*"] }] }, "201")),
    );
    await until(cp, clientIn("other", ratings), widened, {
      accept: (a) => a === "c",
      what: "ratings again for namespace other",
    });
  });

  it("a Sidecar imports only the VirtualServices its egress hosts name, and the services an imported one routes to", async () => {
    const reviewsHost = "reviews.default.svc.cluster.local";
    // A public VirtualService of namespace routing for reviews: x-user jason goes to ratings (c).
    const at = await post(
      cp,
      // edge imports every service of default, and no VirtualService of namespace routing.
      event("ADDED", sidecar({ egress: [{ hosts: ["default/*"] }] }, "300", "edge")),
      // via imports what namespace routing declares: no service, the VirtualService only.
      event("ADDED", sidecar({ egress: [{ hosts: ["routing/*"] }] }, "301", "via")),
      event(
        "ADDED",
        virtualService(
          "reviews-to-ratings",
          {
            http: [
              {
                match: [{ headers: { "x-user": { exact: "jason" } } }],
                route: [{ destination: { host: "ratings.shop.svc.cluster.local" } }],
              },
              { route: [{ destination: { host: reviewsHost } }] },
            ],
          },
          { namespace: "routing", hosts: [reviewsHost], resourceVersion: "302" },
        ),
      ),
    );
    // (a) A namespace without a Sidecar takes the VirtualService; edge, whose Sidecar does not
    // import it, calls reviews as if it did not exist: both endpoints, header or not, never ratings.
    const plain = clientIn("plain", reviews);
    const edge = clientIn("edge", reviews);
    await until(cp, plain, at, {
      accept: (a) => a === "c",
      what: "ratings for jason in plain",
      headers: jason,
    });
    await until(cp, edge, at, {
      accept: (a) => a === "a" || a === "b",
      what: "reviews' own endpoints for jason in edge",
      headers: jason,
    });
    const seen = new Set<string>();
    for (let i = 0; i < 30; i++) seen.add(await edge.who(1000, jason));
    expect([...seen].sort()).toEqual(["a", "b"]);
    // (b) via's egress hosts name no service at all: reviews and ratings exist for it because the
    // VirtualService it imports routes to them, and the header route reaches ratings.
    const via = clientIn("via", reviews);
    await until(cp, via, at, { accept: (a) => a === "c", what: "ratings for jason in via", headers: jason });
    await until(cp, via, at, {
      accept: (a) => a === "a" || a === "b",
      what: "reviews without the header in via",
    });
    for (let i = 0; i < 10; i++) expect(await via.who(1000, jason)).toBe("c");
  });
});
