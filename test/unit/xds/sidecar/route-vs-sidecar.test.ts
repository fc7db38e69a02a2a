/**
 * What a sidecar's VirtualService routes carry beyond the proxyless mapping, as istiod's
 * translateRoute builds them (pilot/pkg/networking/core/route/route.go: rewrite ▶ prefix_rewrite and
 * host_rewrite_literal, TranslateRequestMirrorPolicy ▶ request_mirror_policies with 100% by default,
 * TranslateHeadersOperations ▶ headers to add (set overwrites, add appends) and remove, `host` /
 * `:authority` as the authority rewrite; ApplyRedirect, ApplyDirectResponse; BuildConfigInfoMetadata).
 */
import { describe, expect, it } from "vitest";
import { HeaderValueOption_HeaderAppendAction } from "../../../../lib/gen/envoy/config/core/v3/base_pb.ts";
import type { Route } from "../../../../lib/gen/envoy/config/route/v3/route_components_pb.ts";
import { RedirectAction_RedirectResponseCode } from "../../../../lib/gen/envoy/config/route/v3/route_components_pb.ts";
import { FractionalPercent_DenominatorType } from "../../../../lib/gen/envoy/type/v3/percent_pb.ts";
import { drModel, vsModel } from "../istio-views.ts";
import { bookinfoInputs, bookinfoServices, reviewsDr } from "./bookinfo-routes.ts";
import { generateChecked } from "./check.ts";
import { routeConfig } from "./inspect.ts";

const R = "reviews.default.svc.cluster.local";

function reviewsRoutes(http: Record<string, unknown>[]) {
  const services = bookinfoServices().map((v) =>
    v.hostname === R
      ? { ...v, virtualService: vsModel({ hosts: ["reviews"], http }), destinationRule: reviewsDr }
      : v,
  );
  const { routes, dangling } = generateChecked(bookinfoInputs({ services }));
  expect(dangling).toEqual([]);
  return routeConfig(routes, "9080").virtualHosts.find((v) => v.name === `${R}:9080`)?.routes ?? [];
}

describe("sidecar VirtualService routes", () => {
  it("rewrite: the URI as prefix_rewrite, the authority as host_rewrite_literal", () => {
    const [r] = reviewsRoutes([
      {
        match: [{ uri: { prefix: "/v1/" } }],
        rewrite: { uri: "/", authority: "reviews.internal" },
        route: [{ destination: { host: "reviews", subset: "v1" } }],
      },
    ]);
    const a = r?.action.case === "route" ? r.action.value : undefined;
    expect(a?.prefixRewrite).toBe("/");
    expect(a?.hostRewriteSpecifier).toEqual({ case: "hostRewriteLiteral", value: "reviews.internal" });
    expect(r?.decorator?.operation).toBe(`${R}:9080/v1/*`);
  });

  it("mirror: the mirror's cluster, 100% without a percentage, per million with one", () => {
    const [all, part] = reviewsRoutes([
      {
        match: [{ headers: { x: { exact: "1" } } }],
        mirror: { host: "ratings" },
        route: [{ destination: { host: "reviews", subset: "v1" } }],
      },
      {
        mirrors: [{ destination: { host: "reviews", subset: "v2" }, percentage: { value: 12.5 } }],
        route: [{ destination: { host: "reviews", subset: "v1" } }],
      },
    ]);
    const mirrors = (r: typeof all) =>
      (r?.action.case === "route" ? r.action.value.requestMirrorPolicies : []).map((m) => [
        m.cluster,
        m.runtimeFraction?.defaultValue?.numerator,
        m.runtimeFraction?.defaultValue?.denominator,
        m.traceSampled,
      ]);
    expect(mirrors(all)).toEqual([
      [
        "outbound|9080||ratings.default.svc.cluster.local",
        100,
        FractionalPercent_DenominatorType.HUNDRED,
        false,
      ],
    ]);
    expect(mirrors(part)).toEqual([
      [`outbound|9080|v2|${R}`, 125_000, FractionalPercent_DenominatorType.MILLION, false],
    ]);
  });

  it("headers: set overwrites, add appends, each sorted by name; removes as written", () => {
    const [r] = reviewsRoutes([
      {
        headers: {
          request: { set: { "x-b": "2", "x-a": "1" }, add: { "x-c": "3" }, remove: ["x-internal"] },
          response: { remove: ["server"] },
        },
        route: [{ destination: { host: "reviews", subset: "v1" } }],
      },
    ]);
    expect(r?.requestHeadersToAdd.map((h) => [h.header?.key, h.header?.value, h.appendAction])).toEqual([
      ["x-a", "1", HeaderValueOption_HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD],
      ["x-b", "2", HeaderValueOption_HeaderAppendAction.OVERWRITE_IF_EXISTS_OR_ADD],
      ["x-c", "3", HeaderValueOption_HeaderAppendAction.APPEND_IF_EXISTS_OR_ADD],
    ]);
    expect(r?.requestHeadersToRemove).toEqual(["x-internal"]);
    expect(r?.responseHeadersToRemove).toEqual(["server"]);
  });

  it("headers: `host` / `:authority` become the authority rewrite, never a header Envoy would NACK", () => {
    // TranslateHeadersOperations: isInternalHeader keys are dropped (Envoy rejects ":-prefixed or
    // host headers may not be modified"), isAuthorityHeader values rewrite the host (set over add).
    const [setHost, both, rewritten] = reviewsRoutes([
      {
        match: [{ uri: { exact: "/a" } }],
        headers: {
          request: { set: { host: "reviews.internal", "x-a": "1" }, remove: [":path", "Host", "x-b"] },
        },
        route: [{ destination: { host: "reviews", subset: "v1" } }],
      },
      {
        match: [{ uri: { exact: "/b" } }],
        headers: { request: { set: { ":authority": "from-set" }, add: { host: "from-add" } } },
        route: [{ destination: { host: "reviews", subset: "v1" } }],
      },
      {
        headers: { request: { set: { host: "from-header" } } },
        rewrite: { authority: "from-rewrite" },
        route: [{ destination: { host: "reviews", subset: "v1" } }],
      },
    ]);
    const rewrite = (r: typeof setHost) =>
      r?.action.case === "route" ? r.action.value.hostRewriteSpecifier : undefined;
    expect(setHost?.requestHeadersToAdd.map((h) => h.header?.key)).toEqual(["x-a"]);
    expect(setHost?.requestHeadersToRemove).toEqual(["x-b"]);
    expect(rewrite(setHost)).toEqual({ case: "hostRewriteLiteral", value: "reviews.internal" });
    expect(both?.requestHeadersToAdd).toEqual([]);
    expect(rewrite(both)).toEqual({ case: "hostRewriteLiteral", value: "from-set" });
    expect(rewrite(rewritten)).toEqual({ case: "hostRewriteLiteral", value: "from-rewrite" });
  });

  it("redirect and direct response: Envoy's own actions (ApplyRedirect, ApplyDirectResponse)", () => {
    const [moved, found, direct] = reviewsRoutes([
      { match: [{ uri: { prefix: "/old" } }], redirect: { uri: "/new", authority: "example.com" } },
      {
        match: [{ uri: { exact: "/tmp" } }],
        redirect: { scheme: "https", derivePort: "FROM_REQUEST_PORT", redirectCode: 302 },
      },
      { match: [{ uri: { exact: "/gone" } }], directResponse: { status: 410, body: { string: "gone" } } },
      { route: [{ destination: { host: "reviews", subset: "v1" } }] },
    ]);
    expect(moved?.action.case).toBe("redirect");
    const m = moved?.action.case === "redirect" ? moved.action.value : undefined;
    expect([m?.hostRedirect, m?.pathRewriteSpecifier, m?.responseCode, m?.portRedirect]).toEqual([
      "example.com",
      { case: "pathRedirect", value: "/new" },
      RedirectAction_RedirectResponseCode.MOVED_PERMANENTLY,
      0,
    ]);
    // No abort stands in for the redirect (that is proxyless gRPC's mapping).
    expect(Object.keys(moved?.typedPerFilterConfig ?? {})).toEqual([]);
    expect(moved?.decorator?.operation).toBe("reviews:9080/old*");
    const f = found?.action.case === "redirect" ? found.action.value : undefined;
    expect([f?.schemeRewriteSpecifier, f?.portRedirect, f?.responseCode]).toEqual([
      { case: "schemeRedirect", value: "https" },
      9080,
      RedirectAction_RedirectResponseCode.FOUND,
    ]);
    const d = direct?.action.case === "directResponse" ? direct.action.value : undefined;
    expect([d?.status, d?.body?.specifier]).toEqual([410, { case: "inlineString", value: "gone" }]);
  });

  it("a redirect code Envoy has no RedirectAction code for drops the route (istiod's would be NACKed)", () => {
    const routes = reviewsRoutes([
      { match: [{ uri: { exact: "/x" } }], redirect: { uri: "/y", redirectCode: 399 } },
      { route: [{ destination: { host: "reviews", subset: "v1" } }] },
    ]);
    expect(routes.map((r) => r.action.case)).toEqual(["route"]);
  });

  it("each route names its VirtualService in the istio metadata (util.BuildConfigInfoMetadata)", () => {
    const [r] = reviewsRoutes([{ route: [{ destination: { host: "reviews", subset: "v1" } }] }]);
    const config = r?.metadata?.filterMetadata.istio?.config;
    expect(config).toMatch(
      /^\/apis\/networking\.istio\.io\/v1alpha3\/namespaces\/[^/]+\/virtual-service\/reviews$/,
    );
  });

  it("consistent hash: every key a DestinationRule names (consistentHashToHashPolicy, hashForHTTPDestination)", () => {
    const dr = drModel({
      trafficPolicy: {
        loadBalancer: { consistentHash: { httpCookie: { name: "u", path: "/", ttl: "60s" } } },
      },
      subsets: [
        { name: "v1", labels: { version: "v1" } },
        {
          name: "v2",
          labels: { version: "v2" },
          trafficPolicy: { loadBalancer: { consistentHash: { useSourceIp: true } } },
        },
        {
          name: "v3",
          labels: { version: "v3" },
          trafficPolicy: { loadBalancer: { consistentHash: { httpQueryParameterName: "q" } } },
        },
      ],
    });
    const routes = (http: Record<string, unknown>[] | undefined) => {
      const services = bookinfoServices().map((v) =>
        v.hostname === R
          ? { ...v, virtualService: http && vsModel({ hosts: ["reviews"], http }), destinationRule: dr }
          : v,
      );
      const { routes: rcs } = generateChecked(bookinfoInputs({ services }));
      return routeConfig(rcs, "9080").virtualHosts.find((v) => v.name === `${R}:9080`)?.routes ?? [];
    };
    const action = (r: Route | undefined) => (r?.action.case === "route" ? r.action.value : undefined);
    const keys = (r: Route | undefined) => action(r)?.hashPolicy.map((h) => h.policySpecifier);
    // No VirtualService: the default route hashes on the rule's cookie (hashForService).
    const [dflt] = routes(undefined);
    const cookie = keys(dflt)?.[0];
    expect(cookie?.case).toBe("cookie");
    expect(
      cookie?.case === "cookie" && [cookie.value.name, cookie.value.path, cookie.value.ttl?.seconds],
    ).toEqual(["u", "/", 60n]);
    const [one, split] = routes([
      { match: [{ uri: { prefix: "/a" } }], route: [{ destination: { host: "reviews", subset: "v2" } }] },
      {
        route: [
          { destination: { host: "reviews", subset: "v1" }, weight: 50 },
          { destination: { host: "reviews", subset: "v3" }, weight: 50 },
        ],
      },
    ]);
    expect(keys(one)).toEqual([
      { case: "connectionProperties", value: expect.objectContaining({ sourceIp: true }) },
    ]);
    // One destination that hashes: retries stay on the hashed host (no previous-hosts predicate).
    expect(action(one)?.retryPolicy?.retryHostPredicate).toEqual([]);
    expect(keys(split)?.map((k) => k.case)).toEqual(["cookie", "queryParameter"]);
    // A split keeps the predicate (istiod's consistentHash flag is for a lone destination only).
    expect(action(split)?.retryPolicy?.retryHostPredicate.map((p) => p.name)).toEqual([
      "envoy.retry_host_predicates.previous_hosts",
    ]);
  });

  it("a mirror to a subset nobody defines is a dangling reference the check reports", () => {
    const services = bookinfoServices().map((v) =>
      v.hostname === R
        ? {
            ...v,
            virtualService: vsModel({
              hosts: ["reviews"],
              http: [
                {
                  mirror: { host: "reviews", subset: "v9" },
                  route: [{ destination: { host: "reviews", subset: "v1" } }],
                },
              ],
            }),
            destinationRule: reviewsDr,
          }
        : v,
    );
    expect(generateChecked(bookinfoInputs({ services })).dangling).toEqual([
      `RouteConfiguration "9080": cluster "outbound|9080|v9|${R}" does not exist`,
    ]);
  });
});
