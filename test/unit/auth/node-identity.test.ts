/** A node's claim (Istio's ParseServiceNodeWithMetadata / GetProxyConfigNamespace) checked against an identity. */
import { describe, expect, it } from "vitest";
import { createXdsGuard, type Identity, type NodePosition, nodeClaim } from "../../../lib/auth/index.ts";
import type { Node } from "../../../lib/gen/envoy/config/core/v3/base_pb.ts";

const node = (id: string, metadata: Record<string, string> = {}) => ({ id, metadata }) as unknown as Node;
const sidecar = (ns: string, pod = "productpage-1") =>
  node(`sidecar~10.1.0.9~${pod}.${ns}~${ns}.svc.cluster.local`);

describe("nodeClaim", () => {
  it.each([
    ["sidecar~10.1.0.9~p.default~default.svc.cluster.local", {}, "default", ""],
    ["router~10.1.0.9~gw.istio-system~istio-system.svc.cluster.local", {}, "istio-system", ""],
    ["sidecar~10.1.0.9~p.default~default.svc.cluster.local", { NAMESPACE: "shop" }, "shop", ""],
    ["sidecar~~p~nodomain", {}, "", ""],
    [
      "sidecar~10.1.0.9~p.default~default.svc.cluster.local",
      { SERVICE_ACCOUNT: "productpage" },
      "default",
      "productpage",
    ],
  ])("%s %j ▶ namespace %s", (id, meta, namespace, serviceAccount) => {
    expect(nodeClaim(node(id, meta))).toEqual({ ok: true, namespace, serviceAccount });
  });

  it.each([
    ["sidecar~10.1.0.9~p.default", /missing parts in the service node "sidecar~10.1.0.9~p.default"/],
    ["client~10.1.0.9~p.default~default.svc.cluster.local", /invalid node type/],
    ["a\nforged log line", /"a\\nforged log line"/],
  ])("refuses %s", (id, error) => {
    const c = nodeClaim(node(id));
    expect(c.ok ? "accepted" : c.error).toMatch(error);
  });
});

describe("checkNode", () => {
  const jwt = createXdsGuard(
    { mode: "jwt", issuer: "i", audiences: ["a"], hmacSecret: "x".repeat(32) },
    { now: () => 0 },
  );
  const token = createXdsGuard({ mode: "token", token: "t".repeat(16) }, { now: () => 0 });
  const none = createXdsGuard({ mode: "none", explicit: false }, { now: () => 0 });
  const productpage: Identity = {
    method: "jwt",
    subject: "s",
    namespace: "default",
    serviceAccount: "productpage",
  };
  const shared: Identity = { method: "token", subject: "EDGEPILOT_XDS_TOKEN" };
  const anonymous: Identity = { method: "none", subject: "anonymous" };

  const cases: [string, typeof jwt, Identity, Node | undefined, NodePosition, string][] = [
    ["own namespace", jwt, productpage, sidecar("default"), "stream-first", "ok"],
    ["another namespace", jwt, productpage, sidecar("kube-system"), "stream-first", "permission-denied"],
    [
      "another namespace, later request",
      jwt,
      productpage,
      sidecar("kube-system"),
      "stream-later",
      "permission-denied",
    ],
    ["another namespace, unary", jwt, productpage, sidecar("kube-system"), "unary", "permission-denied"],
    [
      "metadata NAMESPACE overrides the id",
      jwt,
      productpage,
      node(sidecar("default").id, { NAMESPACE: "x" }),
      "unary",
      "permission-denied",
    ],
    [
      "another service account",
      jwt,
      productpage,
      node(sidecar("default").id, { SERVICE_ACCOUNT: "admin" }),
      "unary",
      "permission-denied",
    ],
    [
      "its own service account",
      jwt,
      productpage,
      node(sidecar("default").id, { SERVICE_ACCOUNT: "productpage" }),
      "unary",
      "ok",
    ],
    ["an unparsable node id", jwt, productpage, node("proxy-1"), "stream-first", "invalid-argument"],
    ["no node on a stream's first request", jwt, productpage, undefined, "stream-first", "invalid-argument"],
    [
      "an empty node id on a stream's first request",
      none,
      anonymous,
      node(""),
      "stream-first",
      "invalid-argument",
    ],
    ["no node on a later request", jwt, productpage, undefined, "stream-later", "ok"],
    ["no node on a unary read (jwt)", jwt, productpage, undefined, "unary", "invalid-argument"],
    ["no node on a unary read (token)", token, shared, undefined, "unary", "ok"],
    ["any namespace with the shared token", token, shared, sidecar("kube-system"), "stream-first", "ok"],
    [
      "no node on a stream's first request (none)",
      none,
      anonymous,
      undefined,
      "stream-first",
      "invalid-argument",
    ],
  ];
  it.each(cases)("%s ▶ %s", (_name, guard, identity, n, position, expected) => {
    const d = guard.checkNode(identity, n, position);
    expect(d.ok ? "ok" : d.code).toBe(expected);
    if (!d.ok && expected === "invalid-argument" && !n?.id)
      expect(d.message).toMatch(/^missing node information/);
    if (!d.ok && expected === "permission-denied")
      expect(d.message).toMatch(/^authorization failed: node ".*" claims/);
  });
});
