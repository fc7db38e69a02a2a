/**
 * What a sidecar's VirtualService routes carry beyond the proxyless mapping, as istiod's
 * translateRoute builds them (pilot/pkg/networking/core/route/route.go: rewrite ▶ prefix_rewrite and
 * host_rewrite_literal, TranslateRequestMirrorPolicy ▶ request_mirror_policies with 100% by default,
 * translateHeadersOperations ▶ headers to add (set overwrites, add appends) and remove).
 */
import { describe, expect, it } from "vitest";
import { HeaderValueOption_HeaderAppendAction } from "../../../../lib/gen/envoy/config/core/v3/base_pb.ts";
import { FractionalPercent_DenominatorType } from "../../../../lib/gen/envoy/type/v3/percent_pb.ts";
import { vsModel } from "../istio-views.ts";
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
