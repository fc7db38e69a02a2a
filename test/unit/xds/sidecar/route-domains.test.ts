/**
 * Virtual host domains as istiod builds them for an Envoy sidecar (pilot/pkg/networking/core/
 * httproute.go generateVirtualHostDomains with SidecarIgnorePort, GenerateAltVirtualHosts,
 * dedupeDomains; cases after httproute_test.go TestGenerateVirtualHostDomains).
 */
import { describe, expect, it } from "vitest";
import {
  altVirtualHosts,
  dedupeDomains,
  proxyDnsDomain,
  serviceDomains,
} from "../../../../lib/resources/generators/sidecar/route-domains.ts";
import { bookinfoInputs, svcView } from "./bookinfo-routes.ts";
import { generateChecked } from "./check.ts";
import { routeConfig, vhosts } from "./inspect.ts";

const dns = proxyDnsDomain("default", "cluster.local");

describe("altVirtualHosts", () => {
  it.each([
    ["same namespace", "foo.default.svc.cluster.local", ["foo", "foo.default.svc", "foo.default"]],
    ["another namespace", "foo.bar.svc.cluster.local", ["foo.bar", "foo.bar.svc"]],
    ["not a Kubernetes host", "api.example.com", []],
    ["a host ending like a namespace but no svc", "foo.default.cluster.local", []],
  ])("%s", (_, host, want) => {
    expect(altVirtualHosts(host, dns)).toEqual(want);
  });

  it("a proxy domain without .svc. shares the common tail (foo.local.campus.net on local.campus.net)", () => {
    expect(altVirtualHosts("foo.local.campus.net", "local.campus.net")).toEqual(["foo"]);
    expect(altVirtualHosts("foo.local.campus.net", "remote.campus.net")).toEqual([
      "foo.local",
      "foo.local.campus",
    ]);
    expect(altVirtualHosts("foobar.com", "local.net")).toEqual([]);
  });
});

describe("serviceDomains", () => {
  it("host, short names, VIP; no ports (ignore_port_in_host_matching)", () => {
    const d = serviceDomains(
      { hostname: "reviews.default.svc.cluster.local", addresses: ["10.96.0.10"], headlessKubernetes: false },
      dns,
    );
    expect(d.domains).toEqual([
      "reviews.default.svc.cluster.local",
      "reviews",
      "reviews.default.svc",
      "reviews.default",
      "10.96.0.10",
    ]);
  });

  it("a headless Kubernetes service also gets `*.` forms; an IPv6 VIP is bracketed", () => {
    const d = serviceDomains(
      { hostname: "db.bar.svc.cluster.local", addresses: [], headlessKubernetes: true },
      dns,
    );
    expect(d.domains).toEqual([
      "db.bar.svc.cluster.local",
      "db.bar",
      "db.bar.svc",
      "*.db.bar.svc.cluster.local",
      "*.db.bar",
      "*.db.bar.svc",
    ]);
    const v6 = serviceDomains(
      { hostname: "api.example.com", addresses: ["2001:db8::1"], headlessKubernetes: false },
      dns,
    );
    expect(v6.domains).toEqual(["api.example.com", "[2001:db8::1]"]);
  });

  it("dedupeDomains drops what an earlier host has and short names that are real FQDNs", () => {
    const seen = new Set(["reviews"]);
    expect(
      dedupeDomains(
        ["reviews.default.svc.cluster.local", "REVIEWS", "x.com"],
        seen,
        ["x.com"],
        new Set(["x.com"]),
      ),
    ).toEqual(["reviews.default.svc.cluster.local"]);
    expect(seen.has("reviews.default.svc.cluster.local")).toBe(true);
  });
});

describe("a domain two services would share goes to the first in hostname order", () => {
  it("two services with one VIP: the second keeps its names, not the VIP", () => {
    const inputs = bookinfoInputs({
      services: [
        svcView("a", [{ name: "http", port: 80, protocol: "HTTP" }], ["10.96.1.1"]),
        svcView("b", [{ name: "http", port: 80, protocol: "HTTP" }], ["10.96.1.1"]),
      ],
      instances: [],
    });
    const { routes, dangling } = generateChecked(inputs);
    expect(vhosts(routeConfig(routes, "80"))).toEqual([
      [
        "a.default.svc.cluster.local:80",
        ["a.default.svc.cluster.local", "a", "a.default.svc", "a.default", "10.96.1.1"],
      ],
      ["b.default.svc.cluster.local:80", ["b.default.svc.cluster.local", "b", "b.default.svc", "b.default"]],
      ["allow_any", ["*"]],
    ]);
    expect(dangling).toEqual([]);
  });
});
