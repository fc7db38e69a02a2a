import { describe, expect, it } from "vitest";
import {
  createDestinationRuleIndex,
  effectivePolicy,
  routeConsistentHash,
  toDestinationRule,
} from "../../../../lib/registry/istio/destination-rule.ts";
import { sidecarFor, toSidecar, visibleTo } from "../../../../lib/registry/istio/sidecar.ts";
import { destinationRuleCheck } from "../../../../lib/registry/istio/validate-destination-rule.ts";
import { sidecarCheck } from "../../../../lib/registry/istio/validate-sidecar.ts";
import { virtualServiceCheck } from "../../../../lib/registry/istio/validate-virtual-service.ts";
import { toVirtualService } from "../../../../lib/registry/istio/virtual-service.ts";
import {
  createVirtualServiceHostIndex,
  virtualServicesFor,
} from "../../../../lib/registry/istio/virtual-service-select.ts";
import { destinationCluster, routesForPort } from "../../../../lib/registry/istio/vs-routes.ts";
import { destinationRule, sidecar, virtualService } from "./builders.ts";

/** The path the wiring takes: check, normalize, choose per proxy namespace, flatten for a listener. */
describe("from objects to what a proxyless client in `client` gets for reviews:9080", () => {
  const ns = "prod";
  const vsObj = virtualService(
    {
      hosts: ["reviews"],
      http: [
        {
          match: [{ headers: { "end-user": { exact: "jason" } } }],
          route: [{ destination: { host: "reviews", subset: "v2" } }],
        },
        {
          route: [
            { destination: { host: "reviews", subset: "v1" }, weight: 80 },
            { destination: { host: "reviews", subset: "v3" }, weight: 20 },
          ],
          retries: { attempts: 3, retryOn: "unavailable" },
        },
      ],
    },
    { namespace: ns },
  );
  const drObj = destinationRule(
    {
      trafficPolicy: { loadBalancer: { consistentHash: { httpHeaderName: "x-user" } } },
      subsets: [
        { name: "v1", labels: { version: "v1" } },
        {
          name: "v2",
          labels: { version: "v2" },
          trafficPolicy: { connectionPool: { http: { http2MaxRequests: 10 } } },
        },
      ],
    },
    { namespace: ns },
  );
  const scObj = sidecar({ egress: [{ hosts: ["prod/*"] }] }, { namespace: "client" });

  it("passes validation", () => {
    expect(virtualServiceCheck(vsObj, "object")).toBeUndefined();
    expect(destinationRuleCheck(drObj, "object")).toBeUndefined();
    expect(sidecarCheck(scObj, "object")).toBeUndefined();
  });

  it("routes in order to subset clusters; a missing subset (v3) is still named", () => {
    const vs = toVirtualService(vsObj.metadata, vsObj.spec, "cluster.local");
    const sc = sidecarFor([toSidecar(scObj.metadata, scObj.spec)], "client", "istio-system");
    const host = "reviews.prod.svc.cluster.local";
    expect(visibleTo("client", sc, { kind: "Service", namespace: ns, hosts: [host] })).toBe(true);
    const chosen = createVirtualServiceHostIndex(virtualServicesFor([vs], "client", sc)).forHost(host);
    expect(chosen?.name).toBe("reviews");
    const routes = routesForPort(chosen!, 9080).map(({ route, match }) => ({
      headers: match?.headers.map((h) => `${h.name}=${h.value}`) ?? [],
      clusters:
        route.action.kind === "route"
          ? route.action.destinations.map((d) => [destinationCluster(d, 9080, [9080]), d.weight])
          : [],
      retryOn: route.retries?.grpcRetryOn,
    }));
    expect(routes).toEqual([
      {
        headers: ["end-user=jason"],
        clusters: [["outbound|9080|v2|reviews.prod.svc.cluster.local", 100]],
        retryOn: ["unavailable", "cancelled"],
      },
      {
        headers: [],
        clusters: [
          ["outbound|9080|v1|reviews.prod.svc.cluster.local", 80],
          ["outbound|9080|v3|reviews.prod.svc.cluster.local", 20],
        ],
        retryOn: ["unavailable"],
      },
    ]);
  });

  it("gives each subset cluster its merged policy and the route its hash header", () => {
    const dr = createDestinationRuleIndex([toDestinationRule(drObj.metadata, drObj.spec, "cluster.local")], {
      rootNamespace: "istio-system",
    }).forService("client", "reviews.prod.svc.cluster.local", ns)?.rule;
    expect(effectivePolicy(dr, 9080, "v2")).toEqual({
      loadBalancer: { consistentHash: { httpHeaderName: "x-user", algorithm: "ringHash" } },
      connectionPool: { http2MaxRequests: 10 },
    });
    expect(routeConsistentHash(dr, undefined, "v2")?.httpHeaderName).toBe("x-user");
  });
});
