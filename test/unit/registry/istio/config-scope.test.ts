import { describe, expect, it } from "vitest";
import {
  destinationRuleScope,
  scopeCovers,
  sidecarScope,
  virtualServiceScope,
} from "../../../../lib/registry/istio/config-scope.ts";
import { toDestinationRule } from "../../../../lib/registry/istio/destination-rule.ts";
import { toSidecar } from "../../../../lib/registry/istio/sidecar.ts";
import { toVirtualService } from "../../../../lib/registry/istio/virtual-service.ts";
import { destinationRule, httpRoute, virtualService } from "./builders.ts";

const meta = { name: "x", namespace: "prod" };
const vs = (hosts: string[], dest = "reviews") =>
  toVirtualService(
    meta,
    virtualService({ hosts, http: [httpRoute({ route: [{ destination: { host: dest } }] })] }).spec,
    "cluster.local",
  );
const dr = (host: string) => toDestinationRule(meta, destinationRule({ host }).spec, "cluster.local");

describe("push scope of a config change (old ∪ new)", () => {
  it("a VirtualService: its hosts before and after, wildcards apart, destinations listed", () => {
    const s = virtualServiceScope(vs(["reviews", "*.example.com"]), vs(["ratings"], "ratings"));
    expect(s).toEqual({
      hosts: ["ratings.prod.svc.cluster.local", "reviews.prod.svc.cluster.local"],
      wildcards: ["*.example.com"],
      destinations: ["ratings.prod.svc.cluster.local", "reviews.prod.svc.cluster.local"],
      namespaces: [],
    });
    expect(scopeCovers(s, "a.example.com")).toBe(true);
    expect(scopeCovers(s, "details.prod.svc.cluster.local")).toBe(false);
  });
  it.each([
    ["create", undefined, "reviews", ["reviews.prod.svc.cluster.local"]],
    ["delete", "reviews", undefined, ["reviews.prod.svc.cluster.local"]],
    [
      "host change",
      "reviews",
      "ratings.web.svc.cluster.local",
      ["ratings.web.svc.cluster.local", "reviews.prod.svc.cluster.local"],
    ],
  ])("a DestinationRule %s", (_, before, after, hosts) =>
    expect(
      destinationRuleScope(before ? dr(before) : undefined, after ? dr(after) : undefined).hosts,
    ).toEqual(hosts));
  it.each([
    ["its namespace", "client", ["client"]],
    ["every namespace from the root", "istio-system", ["*"]],
  ])("a Sidecar: %s", (_, namespace, want) => {
    const s = toSidecar({ name: "s", namespace }, { egress: [{ hosts: ["./*"] }] });
    expect(sidecarScope(undefined, s, "istio-system")).toEqual({
      hosts: [],
      wildcards: [],
      destinations: [],
      namespaces: want,
    });
  });
});
