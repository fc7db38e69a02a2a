import { describe, expect, it } from "vitest";
import {
  type SidecarModel,
  sidecarFor,
  sidecarForWorkload,
  toSidecar,
  type VisibleConfig,
  visibleTo,
} from "../../../../lib/registry/istio/sidecar.ts";
import { sidecar } from "./builders.ts";

const sc = (hosts: string[], namespace = "client", extra: Record<string, unknown> = {}): SidecarModel =>
  toSidecar(
    { name: "default", namespace, creationTimestamp: "2026-01-01T00:00:00Z" },
    sidecar({ egress: [{ hosts }], ...extra }).spec,
  );
const svc = (namespace: string, hostname: string, exportTo?: string[]): VisibleConfig => ({
  kind: "Service",
  namespace,
  hosts: [hostname],
  ...(exportTo && { exportTo }),
});
const reviews = "reviews.prod.svc.cluster.local";

describe("visibleTo", () => {
  it.each([
    ["no Sidecar, public service", undefined, svc("prod", reviews), true],
    ["no Sidecar, service exported elsewhere", undefined, svc("prod", reviews, ["other"]), false],
    [
      "no Sidecar, private service in its namespace",
      undefined,
      { ...svc("client", "a.client.svc.cluster.local", ["."]) },
      true,
    ],
    ["no Sidecar, private service elsewhere", undefined, svc("prod", reviews, ["."]), false],
    ["exported nowhere", undefined, svc("prod", reviews, ["~"]), false],
    ["*/* imports everything exported", sc(["*/*"]), svc("prod", reviews), true],
    ["./* imports the proxy's namespace only", sc(["./*"]), svc("prod", reviews), false],
    ["./* imports the proxy's namespace", sc(["./*"]), svc("client", "a.client.svc.cluster.local"), true],
    ["prod/* imports prod", sc(["prod/*"]), svc("prod", reviews), true],
    ["prod/<host> imports that host", sc([`prod/${reviews}`]), svc("prod", reviews), true],
    ["prod/<other host> does not", sc(["prod/ratings.prod.svc.cluster.local"]), svc("prod", reviews), false],
    ["*/*.prod.svc.cluster.local wildcards", sc(["*/*.prod.svc.cluster.local"]), svc("prod", reviews), true],
    ["~/* imports nothing", sc(["~/*"]), svc("prod", reviews), false],
    ["the Sidecar cannot widen exportTo", sc(["*/*"]), svc("prod", reviews, ["other"]), false],
    [
      "a VirtualService imported from its namespace",
      sc(["prod/*"]),
      { kind: "VirtualService", namespace: "prod", hosts: [reviews] } as VisibleConfig,
      true,
    ],
    [
      "a VirtualService of another namespace",
      sc(["prod/*"]),
      { kind: "VirtualService", namespace: "web", hosts: [reviews] } as VisibleConfig,
      false,
    ],
    [
      "a wildcard VirtualService host overlaps an exact import",
      sc([`web/${reviews}`]),
      { kind: "VirtualService", namespace: "web", hosts: ["*.prod.svc.cluster.local"] } as VisibleConfig,
      true,
    ],
    [
      "a DestinationRule follows exportTo",
      sc(["./*"]),
      { kind: "DestinationRule", namespace: "prod", hosts: [reviews] } as VisibleConfig,
      true,
    ],
  ])("%s", (_, sidecarModel, config, want) => expect(visibleTo("client", sidecarModel, config)).toBe(want));
});

describe("sidecarFor (getSidecarScope)", () => {
  const at = (namespace: string, name: string, created: string, extra: Record<string, unknown> = {}) =>
    toSidecar({ name, namespace, creationTimestamp: created }, sidecar(extra).spec);
  it.each([
    [
      "the proxy's namespace, oldest first",
      [at("client", "new", "2026-02-01T00:00:00Z"), at("client", "old", "2026-01-01T00:00:00Z")],
      "old",
    ],
    [
      "else the root namespace's",
      [at("istio-system", "root", "2026-01-01T00:00:00Z"), at("other", "x", "2026-01-01T00:00:00Z")],
      "root",
    ],
    [
      "selector Sidecars are not applied",
      [at("client", "sel", "2026-01-01T00:00:00Z", { workloadSelector: { labels: { app: "a" } } })],
      undefined,
    ],
    ["none", [], undefined],
  ])("%s", (_, sidecars, want) => expect(sidecarFor(sidecars, "client", "istio-system")?.name).toBe(want));

  it.each([
    ["a selector its labels match wins over the namespace-wide one", { app: "pp", v: "1" }, "sel"],
    ["the oldest of two matching selectors", { app: "pp", tier: "web" }, "older"],
    ["labels that match no selector: the namespace-wide one", { app: "other" }, "wide"],
    ["an empty selector selects every workload", {}, "empty"],
  ] as [string, Record<string, string>, string][])("sidecarForWorkload: %s", (what, labels, want) => {
    const sidecars = [
      at("client", "wide", "2025-01-01T00:00:00Z"),
      at("client", "sel", "2026-01-01T00:00:00Z", { workloadSelector: { labels: { app: "pp" } } }),
      at("client", "older", "2025-06-01T00:00:00Z", { workloadSelector: { labels: { tier: "web" } } }),
      at("other", "elsewhere", "2024-01-01T00:00:00Z", { workloadSelector: { labels: { app: "pp" } } }),
      ...(what.startsWith("an empty")
        ? [at("client", "empty", "2024-01-01T00:00:00Z", { workloadSelector: { labels: {} } })]
        : []),
    ];
    expect(sidecarForWorkload(sidecars, "client", labels, "istio-system")?.name).toBe(want);
  });

  it("sidecarForWorkload without a match falls back to the root namespace's, as sidecarFor", () =>
    expect(
      sidecarForWorkload(
        [
          at("istio-system", "root", "2026-01-01T00:00:00Z"),
          at("client", "sel", "2026-01-01T00:00:00Z", { workloadSelector: { labels: { app: "pp" } } }),
        ],
        "client",
        { app: "x" },
        "istio-system",
      )?.name,
    ).toBe("root"));

  it("a Sidecar without egress imports */*", () =>
    expect(
      toSidecar({ name: "s", namespace: "a" }, { ingress: [{ port: { number: 80 } }] }).egressHosts,
    ).toEqual([{ namespace: "*", host: "*" }]));
});
