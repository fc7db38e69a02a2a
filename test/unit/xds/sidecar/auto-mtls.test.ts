/**
 * Auto mTLS of a sidecar's outbound clusters under PeerAuthentication, against istiod
 * (pilot/pkg/model/push_context.go BestEffortInferServiceMTLSMode; pilot/pkg/networking/core
 * cluster_tls.go buildUpstreamTLSSettings, applyUpstreamTLSSettings): ISTIO_MUTUAL by transport
 * socket match unless the destination's namespace (or the mesh) says DISABLE; workload-level
 * policies do not count; a passthrough destination is mTLS only when every endpoint has a sidecar,
 * and then as its transport_socket; a DestinationRule's `tls` always wins. Every cluster passes PGV.
 */
import { describe, expect, it } from "vitest";
import type { Cluster } from "../../../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import type { MtlsMode, SecurityPolicies } from "../../../../lib/registry/istio/security.ts";
import { sidecarClusters } from "../../../../lib/resources/generators/sidecar/cluster.ts";
import type { SidecarInputs } from "../../../../lib/resources/generators/sidecar/types.ts";
import type { ServiceView } from "../../../../lib/resources/types.ts";
import { bookinfoInputs, bookinfoViews, ep, host, reviewsRule, reviewsView, svc, sview } from "./bookinfo.ts";
import { assertClustersValid, byName, tlsContext } from "./cluster-view.ts";
import { meshWide, peer, policies } from "./security.ts";

const REVIEWS = `outbound|9080||${host("reviews")}`;
const REVIEWS_V1 = `outbound|9080|v1|${host("reviews")}`;
const MONGO = `outbound|27017||${host("mongodb")}`;
const API = "outbound|443||api.example.com";

/** How a cluster talks TLS: "matches" (auto mTLS), "istio-mutual" (transport_socket), or "plaintext". */
function tlsOf(c: Cluster): string {
  if (c.transportSocketMatches.length > 0) {
    expect(c.transportSocketMatches.map((m) => m.name)).toEqual(["tlsMode-istio", "tlsMode-disabled"]);
    return "matches";
  }
  if (c.transportSocket) {
    const alpn = tlsContext(c)?.commonTlsContext?.alpnProtocols ?? [];
    return alpn.includes("istio") ? "istio-mutual" : "tls";
  }
  return "plaintext";
}

function clusters(o: Partial<SidecarInputs>) {
  const out = sidecarClusters(bookinfoInputs(o));
  assertClustersValid(out);
  return (name: string) => tlsOf(byName(out, name));
}

/** bookinfo with mongodb's (headless) endpoints labelled as `tlsMode` says, or unlabelled. */
function withMongo(tlsMode: string | undefined): ServiceView[] {
  const labels: Record<string, string> = tlsMode ? { "security.istio.io/tlsMode": tlsMode } : {};
  const mongo = svc("mongodb", [{ name: "mongo", port: 27017, protocol: "Mongo" }], {
    resolution: "Passthrough",
    addresses: [],
  });
  const others = bookinfoViews().filter((v) => v.hostname !== host("mongodb"));
  return [
    ...others,
    sview(mongo, [ep("10.0.6.1", 27017, "mongo", { labels }), ep("10.0.6.2", 27017, "mongo", { labels })]),
  ];
}

const ns = (mode: MtlsMode) => policies([peer({ namespace: "default", mode })]);

describe("auto mTLS by the destination's PeerAuthentication (BestEffortInferServiceMTLSMode)", () => {
  it.each<[string, SecurityPolicies | undefined, string]>([
    ["no policy (PERMISSIVE)", undefined, "matches"],
    ["mesh PERMISSIVE", meshWide("PERMISSIVE"), "matches"],
    ["mesh STRICT", meshWide("STRICT"), "matches"],
    ["mesh DISABLE", meshWide("DISABLE"), "plaintext"],
    ["namespace DISABLE", ns("DISABLE"), "plaintext"],
    [
      "mesh DISABLE, namespace STRICT",
      policies([peer({ mode: "DISABLE" }), peer({ namespace: "default", mode: "STRICT" })]),
      "matches",
    ],
    [
      "namespace UNSET under mesh DISABLE",
      policies([peer({ mode: "DISABLE" }), peer({ namespace: "default", mode: "UNSET" })]),
      "plaintext",
    ],
    ["another namespace DISABLE", policies([peer({ namespace: "shop", mode: "DISABLE" })]), "matches"],
    [
      "a workload policy DISABLE (the client cannot tell which endpoint it reaches)",
      policies([peer({ namespace: "default", selector: { app: "reviews" }, mode: "DISABLE" })]),
      "matches",
    ],
  ])("%s: reviews and its subsets are %s", (_, security, want) => {
    const get = clusters(security ? { security } : {});
    expect([get(REVIEWS), get(REVIEWS_V1)]).toEqual([want, want]);
    // Mesh-external: never.
    expect(get(API)).toBe("plaintext");
  });

  it("enableAutoMtls false: plaintext whatever the policy", () => {
    const mesh = { ...bookinfoInputs().mesh, enableAutoMtls: false };
    expect(clusters({ mesh, security: meshWide("STRICT") })(REVIEWS)).toBe("plaintext");
  });

  it("a DestinationRule's ISTIO_MUTUAL wins over a DISABLE destination", () => {
    const rule = reviewsRule({ trafficPolicy: { tls: { mode: "ISTIO_MUTUAL" } } });
    const services = bookinfoViews().map((v) => (v.hostname === host("reviews") ? reviewsView(rule) : v));
    expect(clusters({ services, security: ns("DISABLE") })(REVIEWS)).toBe("istio-mutual");
  });
});

describe("a passthrough destination: mTLS only when every endpoint has a sidecar", () => {
  it.each<[string, string | undefined, SecurityPolicies | undefined, string]>([
    ["unlabelled endpoints", undefined, undefined, "plaintext"],
    ["endpoints without a sidecar", "disabled", undefined, "plaintext"],
    [
      "every endpoint tlsMode istio: ISTIO_MUTUAL as the transport socket",
      "istio",
      undefined,
      "istio-mutual",
    ],
    ["every endpoint tlsMode istio, namespace DISABLE", "istio", ns("DISABLE"), "plaintext"],
  ])("%s", (_, tlsMode, security, want) => {
    const get = clusters({ services: withMongo(tlsMode), ...(security && { security }) });
    expect(get(MONGO)).toBe(want);
  });

  it("one endpoint without a sidecar makes it plaintext", () => {
    const views = withMongo("istio").map((v) => {
      if (v.hostname !== host("mongodb") || !v.shards) return v;
      const [first, ...rest] = v.shards.shards["Kubernetes/Kubernetes"] ?? [];
      const shards = {
        "Kubernetes/Kubernetes": [...rest, { ...(first as NonNullable<typeof first>), labels: {} }],
      };
      return { ...v, shards: { ...v.shards, shards } };
    });
    expect(clusters({ services: views })(MONGO)).toBe("plaintext");
  });

  it("a subset whose own policy is PASSTHROUGH follows its endpoints; the default cluster does not", () => {
    const rule = reviewsRule({
      subsets: [
        { name: "v1", labels: { version: "v1" }, trafficPolicy: { loadBalancer: { simple: "PASSTHROUGH" } } },
        { name: "v2", labels: { version: "v2" } },
      ],
    });
    const services = bookinfoViews().map((v) => (v.hostname === host("reviews") ? reviewsView(rule) : v));
    const get = clusters({ services });
    expect([get(REVIEWS), get(REVIEWS_V1), get(`outbound|9080|v2|${host("reviews")}`)]).toEqual([
      "matches",
      "plaintext",
      "matches",
    ]);
  });
});
