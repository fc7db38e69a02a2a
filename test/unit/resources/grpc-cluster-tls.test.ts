/**
 * Proxyless Cluster TLS (generators/cluster-tls.ts): grpcgen's applyTLS for a DestinationRule's
 * modes, auto-mTLS toward ports whose endpoints all carry tlsMode istio (and whose workloads do not
 * disable mTLS), and clusters byte for byte as before for a mesh without either.
 */
import { toBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { register } from "@grpc/grpc-js-xds";
import { ClusterResourceType } from "@grpc/grpc-js-xds/build/src/xds-resource-type/cluster-resource-type.js";
import type { XdsDecodeContext } from "@grpc/grpc-js-xds/build/src/xds-resource-type/xds-resource-type.js";
import { beforeAll, describe, expect, it } from "vitest";
import { type Cluster, ClusterSchema } from "../../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import { UpstreamTlsContextSchema } from "../../../lib/gen/envoy/extensions/transport_sockets/tls/v3/tls_pb.ts";
import {
  createSecurityPolicies,
  type PeerAuthenticationModel,
} from "../../../lib/registry/istio/security.ts";
import { clusterGenerator } from "../../../lib/resources/generators/cluster.ts";
import type { ServiceView } from "../../../lib/resources/types.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { pgvViolations } from "../../support/pgv/index.ts";
import { ctx, endpoint, service, shards, view } from "../xds/builders.ts";
import { drModel } from "../xds/istio-views.ts";

const sa = (name: string) => `spiffe://cluster.local/ns/default/sa/${name}`;
const istio = { "security.istio.io/tlsMode": "istio" };
const context = {
  server: {},
  bootstrap: { certificateProviders: { default: { plugin_name: "file_watcher", config: {} } } },
} as unknown as XdsDecodeContext;

const clusters = (v: ServiceView) => clusterGenerator.generate(v, ctx);
const byName = (v: ServiceView) => new Map(clusters(v).map((g) => [g.name, g.message as Cluster]));
const DEFAULT = "outbound|9080||reviews.default.svc.cluster.local";

/** The SANs a cluster's UpstreamTlsContext accepts, or undefined without a transport socket. */
function sansOf(c: Cluster | undefined): string[] | undefined {
  const ts = c?.transportSocket;
  if (!ts) return undefined;
  expect(ts.name).toBe("envoy.transport_sockets.tls");
  if (ts.configType.case !== "typedConfig") throw new Error("no typed config");
  const tls = anyUnpack(ts.configType.value, UpstreamTlsContextSchema);
  const v = tls?.commonTlsContext?.validationContextType;
  if (v?.case !== "combinedValidationContext") throw new Error("no combined validation context");
  expect(v.value.defaultValidationContext?.caCertificateProviderInstance?.certificateName).toBe("ROOTCA");
  expect(tls?.commonTlsContext?.tlsCertificateProviderInstance?.certificateName).toBe("default");
  return v.value.defaultValidationContext?.matchSubjectAltNames.map((m) => m.matchPattern.value as string);
}

/** reviews with two endpoints of the given labels and service accounts. */
const mesh = (labels: [Record<string, string>, Record<string, string>], o: Partial<ServiceView> = {}) =>
  view({
    shards: {
      ...shards({
        "Kubernetes/Kubernetes": [
          endpoint({ labels: { app: "reviews", ...labels[0] }, serviceAccount: sa("reviews") }),
          endpoint({
            address: "10.0.0.2",
            labels: { app: "reviews", ...labels[1] },
            serviceAccount: sa("reviews-v2"),
          }),
        ],
      }),
      serviceAccounts: [sa("reviews"), sa("reviews-v2")],
    },
    ...o,
  });

const peer = (o: Partial<PeerAuthenticationModel>): PeerAuthenticationModel => ({
  name: "p",
  namespace: "default",
  mode: "UNSET",
  ...o,
});

describe("proxyless Cluster TLS (grpcgen applyTLS, auto-mTLS)", () => {
  beforeAll(() => register());

  it("no rule tls, no tlsMode label: no transport socket, the very bytes of a view without policies", () => {
    const plain = mesh([{}, {}]);
    const withPolicies = mesh([{}, {}], {
      peerMtls: createSecurityPolicies([peer({ mode: "STRICT" })], [], "istio-system"),
    });
    expect(sansOf(byName(plain).get(DEFAULT))).toBeUndefined();
    const bytes = (v: ServiceView) => clusters(v).map((g) => toBinary(ClusterSchema, g.message as Cluster));
    expect(bytes(withPolicies)).toEqual(bytes(plain));
  });

  it("ISTIO_MUTUAL: the default cluster and every subset's accept exactly the service accounts", () => {
    const dr = drModel({ trafficPolicy: { tls: { mode: "ISTIO_MUTUAL" } } });
    const got = byName(mesh([{ version: "v1" }, { version: "v2" }], { destinationRule: dr }));
    expect([...got.keys()]).toHaveLength(3);
    for (const c of got.values()) expect(sansOf(c)).toEqual([sa("reviews"), sa("reviews-v2")]);
  });

  it.each([
    "DISABLE",
    "SIMPLE",
    "MUTUAL",
  ])("%s: no transport socket (grpcgen supports only ISTIO_MUTUAL)", (mode) => {
    const tls = mode === "MUTUAL" ? { mode, clientCertificate: "/c", privateKey: "/k" } : { mode };
    const dr = drModel({ trafficPolicy: { tls } });
    for (const c of byName(mesh([istio, istio], { destinationRule: dr })).values())
      expect(sansOf(c)).toBeUndefined();
  });

  it("a subset's ISTIO_MUTUAL applies to that subset's cluster only", () => {
    const dr = drModel({
      subsets: [
        { name: "v1", labels: { version: "v1" }, trafficPolicy: { tls: { mode: "ISTIO_MUTUAL" } } },
        { name: "v2", labels: { version: "v2" } },
      ],
    });
    const got = byName(mesh([{ version: "v1" }, { version: "v2" }], { destinationRule: dr }));
    expect(sansOf(got.get("outbound|9080|v1|reviews.default.svc.cluster.local"))).toHaveLength(2);
    expect(sansOf(got.get("outbound|9080|v2|reviews.default.svc.cluster.local"))).toBeUndefined();
    expect(sansOf(got.get(DEFAULT))).toBeUndefined();
  });

  it("auto-mTLS: every endpoint labelled tlsMode istio ▶ mTLS with the service accounts", () => {
    expect(sansOf(byName(mesh([istio, istio])).get(DEFAULT))).toEqual([sa("reviews"), sa("reviews-v2")]);
  });

  it("auto-mTLS: one endpoint without the label ▶ plaintext (gRPC has no transport socket matches)", () => {
    expect(sansOf(byName(mesh([istio, {}])).get(DEFAULT))).toBeUndefined();
  });

  it("auto-mTLS: a workload whose PeerAuthentication disables mTLS on its port ▶ plaintext", () => {
    const disabled = (p: PeerAuthenticationModel) =>
      byName(
        mesh([istio, { ...istio, version: "v2" }], {
          peerMtls: createSecurityPolicies([p], [], "istio-system"),
        }),
      );
    expect(sansOf(disabled(peer({ mode: "DISABLE" })).get(DEFAULT))).toBeUndefined();
    expect(
      sansOf(disabled(peer({ selector: { version: "v2" }, mode: "DISABLE" })).get(DEFAULT)),
    ).toBeUndefined();
    expect(
      sansOf(
        disabled(
          peer({ selector: { version: "v2" }, mode: "STRICT", portLevelMtls: { 9080: "DISABLE" } }),
        ).get(DEFAULT),
      ),
    ).toBeUndefined();
    // Another port disabled, or PERMISSIVE/STRICT: mTLS stands.
    expect(
      sansOf(
        disabled(
          peer({ selector: { version: "v2" }, mode: "STRICT", portLevelMtls: { 8080: "DISABLE" } }),
        ).get(DEFAULT),
      ),
    ).toHaveLength(2);
    expect(sansOf(disabled(peer({ mode: "PERMISSIVE" })).get(DEFAULT))).toHaveLength(2);
  });

  it("auto-mTLS: never toward a mesh-external service, nor a port without endpoints", () => {
    const external = mesh([istio, istio], { services: [service({ meshExternal: true })] });
    expect(sansOf(byName(external).get(DEFAULT))).toBeUndefined();
    expect(sansOf(byName(view({ shards: shards({}) })).get(DEFAULT))).toBeUndefined();
  });

  it("a rule's DISABLE turns auto-mTLS off", () => {
    const dr = drModel({ trafficPolicy: { tls: { mode: "DISABLE" } } });
    expect(sansOf(byName(mesh([istio, istio], { destinationRule: dr })).get(DEFAULT))).toBeUndefined();
  });

  it("TLS clusters pass Envoy's PGV rules and grpc-js-xds's validation", () => {
    const dr = drModel({ trafficPolicy: { tls: { mode: "ISTIO_MUTUAL" } } });
    const all = [...clusters(mesh([istio, istio])), ...clusters(mesh([{}, {}], { destinationRule: dr }))];
    for (const g of all) {
      expect(pgvViolations(g.schema, g.message), g.name).toEqual([]);
      const bytes = Buffer.from(toBinary(ClusterSchema, g.message as Cluster));
      const r = ClusterResourceType.get().decode(context, { type_url: TypeUrl.cluster, value: bytes });
      expect(r.error, g.name).toBeUndefined();
    }
  });
});
