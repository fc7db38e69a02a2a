/**
 * The relay's status merge (lib/relay/status-merge.ts), table-driven: istiod's setConditions rules
 * (transition times, untouched types, the no-op), createRouteStatus's parents (another
 * controller's kept, ours replaced, added, removed; istiod's TestCreateRouteStatus cases), a
 * Gateway's listeners and addresses, and a cluster-scoped GatewayClass.
 */
import { describe, expect, it } from "vitest";
import type { GatewayApiStatus } from "../../../lib/registry/gateway-api/gateway-status.ts";
import {
  gatewayControllerName,
  kubeTime,
  mergeConditions,
  mergeParents,
  mergeStatus,
  parentRefKey,
  sameStatus,
} from "../../../lib/relay/status-merge.ts";

const then = "2024-05-01T10:00:00Z";
const now = "2024-05-02T12:30:00Z";

const cond = (type: string, status: string, over: Record<string, unknown> = {}) => ({
  type,
  status,
  observedGeneration: 1,
  lastTransitionTime: then,
  reason: type,
  message: `${type} message`,
  ...over,
});

describe("kubeTime", () => {
  it("is RFC 3339 in whole seconds, UTC", () => {
    expect(kubeTime(Date.UTC(2024, 4, 2, 12, 30, 0, 999))).toBe(now);
  });
});

describe("mergeConditions", () => {
  const cases: {
    name: string;
    live: unknown;
    ours: Record<string, unknown>[];
    generation?: number;
    want: Record<string, unknown>[];
  }[] = [
    {
      name: "no live status: every condition stamped now, in type order, observedGeneration filled in",
      live: undefined,
      ours: [
        { type: "Programmed", status: "True", reason: "Programmed", message: "m" },
        { type: "Accepted", status: "True", reason: "Accepted", message: "m" },
      ],
      generation: 3,
      want: [
        {
          type: "Accepted",
          status: "True",
          observedGeneration: 3,
          lastTransitionTime: now,
          reason: "Accepted",
          message: "m",
        },
        {
          type: "Programmed",
          status: "True",
          observedGeneration: 3,
          lastTransitionTime: now,
          reason: "Programmed",
          message: "m",
        },
      ],
    },
    {
      name: "same status, message and generation: the live condition kept as it is (reason too, as istiod)",
      live: [cond("Accepted", "True", { reason: "Old" })],
      ours: [{ type: "Accepted", status: "True", reason: "Accepted", message: "Accepted message" }],
      generation: 1,
      want: [cond("Accepted", "True", { reason: "Old" })],
    },
    {
      name: "same status, new message or generation: replaced, lastTransitionTime kept",
      live: [cond("Accepted", "True"), cond("ResolvedRefs", "True")],
      ours: [
        { type: "Accepted", status: "True", reason: "Accepted", message: "new" },
        { type: "ResolvedRefs", status: "True", reason: "ResolvedRefs", message: "ResolvedRefs message" },
      ],
      generation: 2,
      want: [
        cond("Accepted", "True", { observedGeneration: 2, message: "new" }),
        cond("ResolvedRefs", "True", { observedGeneration: 2 }),
      ],
    },
    {
      name: "status changed: replaced and stamped now",
      live: [cond("ResolvedRefs", "True")],
      ours: [{ type: "ResolvedRefs", status: "False", reason: "RefNotPermitted", message: "denied" }],
      generation: 1,
      want: [
        {
          type: "ResolvedRefs",
          status: "False",
          observedGeneration: 1,
          lastTransitionTime: now,
          reason: "RefNotPermitted",
          message: "denied",
        },
      ],
    },
    {
      name: "types we do not report are kept where they are; new ones appended",
      live: [cond("Custom", "True"), cond("Accepted", "True")],
      ours: [
        { type: "Programmed", status: "True", reason: "Programmed", message: "Programmed message" },
        { type: "Accepted", status: "True", reason: "Accepted", message: "Accepted message" },
      ],
      generation: 1,
      want: [
        cond("Custom", "True"),
        cond("Accepted", "True"),
        cond("Programmed", "True", { lastTransitionTime: now }),
      ],
    },
    {
      name: "observedGeneration as given wins over the object's generation",
      live: [],
      ours: [{ type: "Accepted", status: "True", observedGeneration: 7, reason: "A", message: "" }],
      generation: 8,
      want: [
        {
          type: "Accepted",
          status: "True",
          observedGeneration: 7,
          lastTransitionTime: now,
          reason: "A",
          message: "",
        },
      ],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      expect(mergeConditions(c.live, c.ours, c.generation, now)).toEqual(c.want);
    });
  }
});

describe("parentRefKey", () => {
  it("fills in istiod's defaults, so two spellings of one parent are one key", () => {
    expect(parentRefKey({ name: "gw" }, "apps")).toBe("gateway.networking.k8s.io/Gateway/gw//0.apps");
    expect(
      parentRefKey(
        { group: "gateway.networking.k8s.io", kind: "Gateway", name: "gw", namespace: "apps" },
        "x",
      ),
    ).toBe("gateway.networking.k8s.io/Gateway/gw//0.apps");
    expect(parentRefKey({ group: "", kind: "Service", name: "reviews", port: 9080 }, "apps")).toBe(
      "/Service/reviews//9080.apps",
    );
  });
});

describe("mergeParents", () => {
  const ref = { group: "gateway.networking.k8s.io", kind: "Gateway", name: "gw", namespace: "istio-ingress" };
  const other = {
    parentRef: ref,
    controllerName: "another-gateway-controller",
    conditions: [{ type: "foo", status: "bar" }],
  };
  const ours = (conditions: Record<string, unknown>[], parentRef: Record<string, unknown> = ref) => ({
    parentRef,
    controllerName: gatewayControllerName,
    conditions,
  });
  const accepted = [
    cond("Accepted", "True", { reason: "", message: "Route was valid" }),
    cond("ResolvedRefs", "True", { reason: "", message: "All references resolved" }),
  ];
  const computed = (resolved: "True" | "False") => [
    { type: "Accepted", status: "True", reason: "Accepted", message: "Route was valid" },
    resolved === "True"
      ? { type: "ResolvedRefs", status: "True", reason: "ResolvedRefs", message: "All references resolved" }
      : {
          type: "ResolvedRefs",
          status: "False",
          reason: "RefNotPermitted",
          message: "backend not permitted",
        },
  ];

  // istiod's TestCreateRouteStatus: the same result is no change; a route error is one.
  it("istiod's 'no error': the live parents are what we would write (no write)", () => {
    const live = [other, ours(accepted)];
    const merged = mergeParents(live, [ours(computed("True"))], "foo", 1, now);
    expect(sameStatus(merged, live)).toBe(true);
  });
  it("istiod's 'route status error': ours replaced in place, the other controller's entry untouched", () => {
    const live = [other, ours(accepted)];
    const merged = mergeParents(live, [ours(computed("False"))], "foo", 1, now);
    expect(sameStatus(merged, live)).toBe(false);
    expect(merged[0]).toEqual(other);
    expect(merged[1]?.conditions).toEqual([
      accepted[0],
      {
        type: "ResolvedRefs",
        status: "False",
        observedGeneration: 1,
        lastTransitionTime: now,
        reason: "RefNotPermitted",
        message: "backend not permitted",
      },
    ]);
  });
  it("a parent we stop reporting goes; another controller's stays; new parents are appended in descending order", () => {
    const gone = ours(accepted, { ...ref, name: "old" });
    const live = [gone, other];
    const a = { name: "a", namespace: "istio-ingress" };
    const b = { name: "b", namespace: "istio-ingress" };
    const merged = mergeParents(live, [ours(computed("True"), a), ours(computed("True"), b)], "apps", 2, now);
    expect(merged.map((p) => [p.controllerName, (p.parentRef as { name: string }).name])).toEqual([
      ["another-gateway-controller", "gw"],
      [gatewayControllerName, "b"],
      [gatewayControllerName, "a"],
    ]);
  });
  it("no parents left: an empty list, not absent", () => {
    expect(mergeParents([ours(accepted)], [], "apps", 1, now)).toEqual([]);
  });
});

describe("mergeStatus", () => {
  const gatewayClass: GatewayApiStatus = {
    group: "gateway.networking.k8s.io",
    version: "v1",
    resource: "gatewayclasses",
    kind: "GatewayClass",
    name: "istio",
    generation: 1,
    status: {
      conditions: [
        { type: "Accepted", status: "True", reason: "Accepted", message: "Handled by Istio controller" },
      ],
    },
  };
  it("a cluster-scoped GatewayClass with no status: Accepted stamped now", () => {
    expect(mergeStatus(undefined, gatewayClass, now)).toEqual({
      conditions: [
        {
          type: "Accepted",
          status: "True",
          observedGeneration: 1,
          lastTransitionTime: now,
          reason: "Accepted",
          message: "Handled by Istio controller",
        },
      ],
    });
  });
  it("a GatewayClass already accepted at this generation: no change; the API server's defaults kept", () => {
    const live = {
      conditions: [
        {
          lastTransitionTime: then,
          message: "Handled by Istio controller",
          observedGeneration: 1,
          reason: "Accepted",
          status: "True",
          type: "Accepted",
        },
      ],
      supportedFeatures: [{ name: "HTTPRoute" }],
    };
    const merged = mergeStatus(live, gatewayClass, now);
    expect(sameStatus(merged, live)).toBe(true);
    expect(merged.supportedFeatures).toEqual(live.supportedFeatures);
  });

  const gateway = (status: Record<string, unknown>): GatewayApiStatus => ({
    group: "gateway.networking.k8s.io",
    version: "v1",
    resource: "gateways",
    kind: "Gateway",
    namespace: "istio-ingress",
    name: "gw",
    generation: 2,
    status,
  });
  const listener = (name: string, status: string) => ({
    name,
    attachedRoutes: 1,
    supportedKinds: [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute" }],
    conditions: [{ type: "Programmed", status, reason: "Programmed", message: "m" }],
  });
  it("a Gateway: listeners ours with live transition times; addresses kept until we report some", () => {
    const live = {
      addresses: [{ type: "IPAddress", value: "10.0.0.9" }],
      conditions: [cond("Accepted", "True", { observedGeneration: 2, message: "Resource accepted" })],
      listeners: [
        {
          ...listener("http", "True"),
          conditions: [cond("Programmed", "True", { message: "m", reason: "Programmed" })],
        },
        listener("gone", "True"),
      ],
    };
    const merged = mergeStatus(
      live,
      gateway({
        addresses: [],
        conditions: [{ type: "Accepted", status: "True", reason: "Accepted", message: "Resource accepted" }],
        listeners: [listener("http", "True"), listener("https", "False")],
      }),
      now,
    );
    expect(merged.addresses).toEqual(live.addresses);
    expect(merged.conditions).toEqual(live.conditions);
    const listeners = merged.listeners as { name: string; conditions: { lastTransitionTime: string }[] }[];
    expect(listeners.map((l) => l.name)).toEqual(["http", "https"]);
    expect(listeners[0]?.conditions[0]?.lastTransitionTime).toBe(then);
    expect(listeners[1]?.conditions[0]?.lastTransitionTime).toBe(now);

    const moved = mergeStatus(live, gateway({ addresses: [{ type: "IPAddress", value: "10.0.0.10" }] }), now);
    expect(moved.addresses).toEqual([{ type: "IPAddress", value: "10.0.0.10" }]);
  });
});

describe("sameStatus", () => {
  const cases: [string, unknown, unknown, boolean][] = [
    ["key order does not count", { a: 1, b: [{ c: 2, d: 3 }] }, { b: [{ d: 3, c: 2 }], a: 1 }, true],
    ["array order counts", { a: [1, 2] }, { a: [2, 1] }, false],
    ["an absent field is not an empty one", { a: [] }, {}, false],
    ["undefined fields are absent", { a: 1, b: undefined }, { a: 1 }, true],
  ];
  for (const [name, a, b, want] of cases) it(name, () => expect(sameStatus(a, b)).toBe(want));
});
