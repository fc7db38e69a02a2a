/**
 * The sidecar's node and service instances as istiod reads them (pilot/pkg/model/context.go
 * ParseServiceNodeWithMetadata: `<type>~<ip>~<id>~<domain>`; GetProxyServiceTargets: the services
 * whose endpoints carry the proxy's IP, with the endpoint port as target port).
 */
import { describe, expect, it } from "vitest";
import { parseSidecarNode, serviceInstances } from "../../../../lib/resources/generators/sidecar/proxy.ts";
import { bookinfoViews, ep, host, NODE_ID, PROXY_IP, svc, sview } from "./bookinfo.ts";

const meta = {
  NAMESPACE: "default",
  LABELS: { app: "productpage", version: "v1" },
  CLUSTER_ID: "Kubernetes",
};

describe("parseSidecarNode", () => {
  it("splits the bookinfo productpage node id and reads its metadata", () => {
    const r = parseSidecarNode(NODE_ID, {
      ...meta,
      INSTANCE_IPS: `${PROXY_IP},fd00::5`,
      ISTIO_VERSION: "1.24.0",
    });
    expect(r).toEqual({
      ok: true,
      proxy: {
        nodeId: NODE_ID,
        parts: {
          type: "sidecar",
          ip: PROXY_IP,
          id: "productpage-v1-6b746f74dc-9stvs.default",
          dnsDomain: "default.svc.cluster.local",
        },
        ipAddresses: [PROXY_IP, "fd00::5"],
        namespace: "default",
        metadata: {
          labels: { app: "productpage", version: "v1" },
          clusterId: "Kubernetes",
          istioVersion: "1.24.0",
        },
      },
    });
  });

  it("namespace from the id when metadata has none", () => {
    const r = parseSidecarNode(
      "sidecar~10.0.0.9~ratings-v1-x.bookinfo~bookinfo.svc.cluster.local",
      undefined,
    );
    expect(r.ok && r.proxy.namespace).toBe("bookinfo");
  });

  it.each([
    ["sidecar~10.0.0.5~pod.ns", /3 "~" fields/],
    ["proxyless~10.0.0.5~pod.ns~ns.svc.cluster.local", /sidecar or router/],
    ["sidecar~not-an-ip~pod.ns~ns.svc.cluster.local", /not an IP/],
  ])("rejects %s", (id, why) => {
    const r = parseSidecarNode(id, meta);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(why);
  });
});

describe("serviceInstances (GetProxyServiceTargets)", () => {
  it("productpage's sidecar serves productpage:9080 ▶ 9080 and nothing else", () => {
    const r = parseSidecarNode(NODE_ID, meta);
    if (!r.ok) throw new Error(r.error);
    const got = serviceInstances(r.proxy, bookinfoViews());
    expect(got.map((i) => [i.service.hostname, i.servicePort.port, i.targetPort])).toEqual([
      [host("productpage"), 9080, 9080],
    ]);
  });

  it("a target port that differs from the service port, two services on one pod, sorted", () => {
    const r = parseSidecarNode(NODE_ID, meta);
    if (!r.ok) throw new Error(r.error);
    const a = sview(svc("b-api", [{ name: "http", port: 80, protocol: "HTTP" }]), [
      ep(PROXY_IP, 8080, "http"),
    ]);
    const b = sview(svc("a-api", [{ name: "grpc", port: 7070, protocol: "GRPC" }]), [
      ep(PROXY_IP, 17070, "grpc"),
      ep("10.9.9.9", 17070, "grpc"),
    ]);
    const got = serviceInstances(r.proxy, [a, b]);
    expect(got.map((i) => [i.service.name, i.servicePort.port, i.targetPort])).toEqual([
      ["a-api", 7070, 17070],
      ["b-api", 80, 8080],
    ]);
  });
});
