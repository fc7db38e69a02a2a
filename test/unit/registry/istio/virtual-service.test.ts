import { describe, expect, it } from "vitest";
import {
  defaultRetryPolicy,
  toVirtualService,
  type VirtualServiceModel,
} from "../../../../lib/registry/istio/virtual-service.ts";
import { destinationCluster, routesForPort } from "../../../../lib/registry/istio/vs-routes.ts";
import { httpRoute, virtualService } from "./builders.ts";

const meta = { name: "reviews", namespace: "prod", creationTimestamp: "2026-01-01T00:00:00Z" };
const vs = (spec: Record<string, unknown>): VirtualServiceModel =>
  toVirtualService(meta, virtualService(spec).spec, "cluster.local");
const route0 = (r: Record<string, unknown>) => vs({ http: [httpRoute(r)] }).http[0];

describe("toVirtualService", () => {
  it.each([
    ["reviews", "reviews.prod.svc.cluster.local"],
    ["reviews.prod", "reviews.prod"],
    ["reviews.prod.svc.cluster.local", "reviews.prod.svc.cluster.local"],
    ["*.example.com", "*.example.com"],
    ["10.0.0.1", "10.0.0.1"],
  ])("resolves host %s as %s (hosts and destinations)", (host, resolved) => {
    const v = vs({ hosts: [host], http: [httpRoute({ route: [{ destination: { host } }] })] });
    expect(v.hosts).toEqual([resolved]);
    expect(v.http[0]?.action).toEqual({ kind: "route", destinations: [{ host: resolved, weight: 100 }] });
  });

  it.each([
    ["a lone destination gets 100", [{ w: 30 }], [100]],
    ["a lone destination without weight gets 100", [{}], [100]],
    ["weights are kept relative", [{ w: 80 }, { w: 20 }], [80, 20]],
    ["weights need not sum to 100", [{ w: 1 }, { w: 3 }], [1, 3]],
    ["zero weights are dropped", [{ w: 0 }, { w: 5 }, {}], [5]],
  ])("%s", (_, dests, weights) => {
    const r = route0({
      route: dests.map((d: { w?: number }, i) => ({
        destination: { host: "reviews", subset: `v${i}` },
        ...(d.w !== undefined && { weight: d.w }),
      })),
    });
    expect(r?.action.kind === "route" && r.action.destinations.map((d) => d.weight)).toEqual(weights);
  });

  it("keeps subset and port on destinations", () => {
    const r = route0({ route: [{ destination: { host: "ratings", subset: "v2", port: { number: 9080 } } }] });
    expect(r?.action).toEqual({
      kind: "route",
      destinations: [{ host: "ratings.prod.svc.cluster.local", subset: "v2", port: 9080, weight: 100 }],
    });
  });

  it("normalizes matches: path on the gRPC method, headers lower-cased and sorted, ignored conditions listed", () => {
    const r = route0({
      match: [
        {
          name: "m",
          uri: { prefix: "/helloworld.Greeter/" },
          ignoreUriCase: true,
          headers: { "X-User": { exact: "jason" }, "a-b": { regex: "v[12]" }, present: {} },
          method: { exact: "POST" },
          port: 9080,
        },
        { gateways: ["istio-system/ingress"], uri: { exact: "/x" } },
      ],
    });
    expect(r?.matches).toEqual([
      {
        name: "m",
        path: { kind: "prefix", value: "/helloworld.Greeter/", ignoreCase: true },
        headers: [
          { name: "a-b", kind: "regex", value: "v[12]" },
          { name: "present", kind: "present", value: "" },
          { name: "x-user", kind: "exact", value: "jason" },
        ],
        port: 9080,
        ignored: ["method"],
      },
    ]);
  });

  it.each([
    ["no retries block: Istio's default policy", undefined, { ...defaultRetryPolicy }],
    ["attempts 0: disabled", { attempts: 0 }, undefined],
    ["attempts only: the default conditions", { attempts: 5 }, { ...defaultRetryPolicy, attempts: 5 }],
    [
      "retryOn split into gRPC codes, others and HTTP codes",
      { attempts: 3, perTryTimeout: "250ms", retryOn: "unavailable,5xx,503,resource-exhausted,+429" },
      {
        attempts: 3,
        perTryTimeoutMs: 250,
        grpcRetryOn: ["unavailable", "resource-exhausted"],
        otherRetryOn: ["5xx", "retriable-status-codes"],
        retriableStatusCodes: [503, 429],
      },
    ],
  ])("retries: %s", (_, retries, want) =>
    expect(route0(retries === undefined ? {} : { retries })?.retries).toEqual(want));

  it.each([
    [
      "abort with a gRPC status",
      { abort: { grpcStatus: "UNAVAILABLE", percentage: { value: 50 } } },
      { abort: { perMillion: 500000, grpcStatus: 14 } },
    ],
    [
      "abort with an HTTP status, no percentage (0%)",
      { abort: { httpStatus: 503 } },
      { abort: { perMillion: 0, httpStatus: 503 } },
    ],
    [
      "a fractional percentage",
      { abort: { httpStatus: 503, percentage: { value: 0.1 } } },
      { abort: { perMillion: 1000, httpStatus: 503 } },
    ],
    [
      "delay with the deprecated percent",
      { delay: { fixedDelay: "2s", percent: 10 } },
      { delay: { perMillion: 100000, fixedDelayMs: 2000 } },
    ],
    ["abort without an error type: none", { abort: { percentage: { value: 10 } } }, undefined],
  ])("fault: %s", (_, fault, want) => expect(route0({ fault })?.fault).toEqual(want));

  it("reads timeout, redirect, direct response and delegate actions", () => {
    const v = vs({
      http: [
        httpRoute({ timeout: "1.5s" }),
        { redirect: { uri: "/v2" } },
        { directResponse: { status: 503 } },
        { delegate: { name: "d", namespace: "x" } },
      ],
    });
    expect(v.http[0]?.timeoutMs).toBe(1500);
    expect(v.http.slice(1).map((r) => r.action)).toEqual([
      { kind: "redirect", uri: "/v2" },
      { kind: "directResponse", status: 503 },
      { kind: "delegate" },
    ]);
  });

  it.each([
    [[], true],
    [["mesh"], true],
    [["mesh", "ns/gw"], true],
    [["ns/gw"], false],
  ])("gateways %j apply to the mesh: %s", (gateways, mesh) =>
    expect(vs({ gateways }).appliesToMesh).toBe(mesh));
});

describe("routesForPort (BuildHTTPRoutesForVirtualService)", () => {
  const names = (v: VirtualServiceModel, port: number) =>
    routesForPort(v, port).map((f) => `${f.route.name}${f.match ? `/${f.match.name}` : ""}`);

  it("keeps order, one route per match, skips other ports, stops after a catch-all", () => {
    const v = vs({
      http: [
        httpRoute({
          name: "a",
          match: [
            { name: "h", headers: { x: { exact: "1" } } },
            { name: "p", port: 8080, uri: { prefix: "/" } },
          ],
        }),
        httpRoute({ name: "b", match: [{ name: "all", uri: { prefix: "/" } }] }),
        httpRoute({ name: "never" }),
      ],
    });
    expect(names(v, 9080)).toEqual(["a/h", "b/all"]);
    expect(names(v, 8080)).toEqual(["a/h", "a/p"]);
  });

  it("a route without matches is the last", () => {
    const v = vs({ http: [httpRoute({ name: "x" }), httpRoute({ name: "y" })] });
    expect(names(v, 80)).toEqual(["x"]);
  });

  it("a route whose matches all name other gateways never applies", () => {
    const v = vs({
      http: [httpRoute({ name: "gw", match: [{ gateways: ["ns/gw"] }] }), httpRoute({ name: "d" })],
    });
    expect(names(v, 80)).toEqual(["d"]);
  });
});

describe("destinationCluster (GetDestinationCluster)", () => {
  it.each([
    [
      { host: "a.ns.svc.cluster.local", weight: 100, subset: "v1", port: 9090 },
      80,
      undefined,
      "outbound|9090|v1|a.ns.svc.cluster.local",
    ],
    [{ host: "a.ns.svc.cluster.local", weight: 100 }, 80, [7070], "outbound|7070||a.ns.svc.cluster.local"],
    [
      { host: "a.ns.svc.cluster.local", weight: 100 },
      80,
      [7070, 7071],
      "outbound|80||a.ns.svc.cluster.local",
    ],
  ])("%j on %s", (d, port, svcPorts, want) => expect(destinationCluster(d, port, svcPorts)).toBe(want));
});
