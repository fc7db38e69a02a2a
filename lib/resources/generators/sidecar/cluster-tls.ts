/**
 * Upstream TLS of a sidecar Cluster, as istiod writes it before any certificate exists
 * (pilot/pkg/networking/core/cluster_tls.go: buildUpstreamTLSSettings, buildUpstreamClusterTLSContext,
 * applyUpstreamTLSSettings, constructUpstreamTLS, defaultTransportSocketMatch; pkg/model
 * ConstructSdsSecretConfig): certificates are named, never inlined — the workload's own (`default`)
 * and the mesh root (`ROOTCA`) come over SDS from the agent's `sds-grpc` cluster, files named in a
 * DestinationRule as `file-root:<path>` / `file-cert:<cert>~<key>`.
 */
import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import {
  type Cluster,
  Cluster_DiscoveryType,
  Cluster_TransportSocketMatchSchema,
} from "../../../gen/envoy/config/cluster/v3/cluster_pb.ts";
import { TransportSocketSchema } from "../../../gen/envoy/config/core/v3/base_pb.ts";
import {
  ApiConfigSource_ApiType,
  ApiConfigSourceSchema,
  ApiVersion,
  ConfigSourceSchema,
} from "../../../gen/envoy/config/core/v3/config_source_pb.ts";
import {
  GrpcService_EnvoyGrpcSchema,
  GrpcServiceSchema,
} from "../../../gen/envoy/config/core/v3/grpc_service_pb.ts";
import { RawBufferSchema } from "../../../gen/envoy/extensions/transport_sockets/raw_buffer/v3/raw_buffer_pb.ts";
import {
  CertificateValidationContextSchema,
  TlsParameters_TlsProtocol,
  TlsParametersSchema,
} from "../../../gen/envoy/extensions/transport_sockets/tls/v3/common_pb.ts";
import { SdsSecretConfigSchema } from "../../../gen/envoy/extensions/transport_sockets/tls/v3/secret_pb.ts";
import {
  CommonTlsContext_CombinedCertificateValidationContextSchema,
  CommonTlsContextSchema,
  UpstreamTlsContextSchema,
} from "../../../gen/envoy/extensions/transport_sockets/tls/v3/tls_pb.ts";
import { StringMatcherSchema } from "../../../gen/envoy/type/matcher/v3/string_pb.ts";
import type { MtlsMode } from "../../../registry/istio/security.ts";
import type { ClientTls } from "../../../registry/istio/traffic-policy.ts";
import { durationOf } from "../cluster-policy.ts";
import { type ClusterDraft, discoveryType } from "./cluster-traffic.ts";

/** The bootstrap cluster pilot-agent serves SDS on (pkg/model SDSClusterName). */
export const SDS_CLUSTER = "sds-grpc";
/** util.ALPNInMeshWithMxc / ALPNInMeshH2WithMxc: what an ISTIO_MUTUAL client offers. */
const ALPN_IN_MESH = ["istio-peer-exchange", "istio"];
const ALPN_IN_MESH_H2 = ["istio-peer-exchange", "istio", "h2"];

/** What the TLS of one cluster depends on besides the DestinationRule's `tls`. */
export interface TlsInputs {
  /** SPIFFE identities of the service's endpoints (and a ServiceEntry's subjectAltNames), sorted. */
  serviceAccounts: readonly string[];
  /** istioMutualSni: `outbound_.<port>_.<subset>_.<host>`. */
  sni: string;
  meshExternal: boolean;
  /** The service comes from a ServiceEntry (provider External): its SANs stand in for SIMPLE/MUTUAL. */
  external: boolean;
  /** MeshConfig.enableAutoMtls. */
  autoMtls: boolean;
  /**
   * The destination's mTLS as istiod infers it (PushContext.BestEffortInferServiceMTLSMode,
   * inferServiceMtls): DISABLE keeps auto mTLS plaintext.
   */
  serviceMtls: ServiceMtls;
}

/** BestEffortInferServiceMTLSMode's answer for a service that is not mesh-external. */
export type ServiceMtls = Exclude<MtlsMode, "UNSET">;

/**
 * applyUpstreamTLSSettings: a rule's ISTIO_MUTUAL, SIMPLE or MUTUAL becomes the cluster's
 * transport_socket; DISABLE none. Without a rule's `tls`, auto mTLS (on by default,
 * buildUpstreamTLSSettings): nothing toward a mesh-external service or one whose inferred mode is
 * DISABLE; else ISTIO_MUTUAL, as transport_socket_matches — `tlsMode-istio` (endpoints whose metadata
 * says tlsMode: istio, i.e. have a sidecar) with ISTIO_MUTUAL, else `tlsMode-disabled` plaintext —
 * except on an ORIGINAL_DST cluster, which has no per-endpoint match and takes it as its
 * transport_socket (its inferred mode says every endpoint has a sidecar).
 */
export function applyUpstreamTls(d: ClusterDraft, tls: ClientTls | undefined, t: TlsInputs): void {
  const h2 = d.http?.upstream === "h2";
  if (tls) {
    if (tls.mode === "ISTIO_MUTUAL") {
      const sans = tls.subjectAltNames ?? t.serviceAccounts;
      d.fields.transportSocket = tlsSocket(istioMutual(sans, tls.sni ?? t.sni, h2));
    } else if (tls.mode === "SIMPLE" || tls.mode === "MUTUAL") {
      const ctx = userTls(d, tls, t);
      if (ctx) d.fields.transportSocket = tlsSocket(ctx);
    }
    return;
  }
  if (!t.autoMtls || t.meshExternal || t.serviceMtls === "DISABLE") return;
  if (discoveryType(d) === Cluster_DiscoveryType.ORIGINAL_DST) {
    d.fields.transportSocket = tlsSocket(istioMutual(t.serviceAccounts, t.sni, h2));
    return;
  }
  d.fields.transportSocketMatches = [
    create(Cluster_TransportSocketMatchSchema, {
      name: "tlsMode-istio",
      match: { tlsMode: "istio" },
      transportSocket: tlsSocket(istioMutual(t.serviceAccounts, t.sni, h2)),
    }),
    create(Cluster_TransportSocketMatchSchema, {
      name: "tlsMode-disabled",
      match: {},
      transportSocket: create(TransportSocketSchema, {
        name: "envoy.transport_sockets.raw_buffer",
        configType: { case: "typedConfig", value: anyPack(RawBufferSchema, create(RawBufferSchema)) },
      }),
    }),
  ];
}

function istioMutual(sans: readonly string[], sni: string, h2: boolean) {
  return create(UpstreamTlsContextSchema, {
    sni,
    commonTlsContext: create(CommonTlsContextSchema, {
      tlsParams: tlsParams(),
      tlsCertificateSdsSecretConfigs: [sds("default", true)],
      validationContextType: {
        case: "combinedValidationContext",
        value: create(CommonTlsContext_CombinedCertificateValidationContextSchema, {
          defaultValidationContext: create(CertificateValidationContextSchema, {
            matchSubjectAltNames: sans.map((s) =>
              create(StringMatcherSchema, { matchPattern: { case: "exact", value: s } }),
            ),
          }),
          validationContextSdsSecretConfig: sds("ROOTCA", true),
        }),
      },
      alpnProtocols: h2 ? ALPN_IN_MESH_H2 : ALPN_IN_MESH,
    }),
  });
}

/**
 * constructUpstreamTLS: SNI as written, else auto_sni (and auto_san_validation without SANs) in the
 * upstream HTTP options; the CA (default `system`) over SDS unless insecureSkipVerify; MUTUAL adds
 * the client certificate. A credentialName on a rule without workloadSelector gives no TLS context
 * at all on a sidecar (istiod's guard against every sidecar fetching a gateway secret).
 */
function userTls(d: ClusterDraft, tls: ClientTls, t: TlsInputs) {
  const privileged = tls.credentialName !== undefined && !tls.credentialName.startsWith("configmap://");
  if (privileged) return undefined;
  if (tls.mode === "MUTUAL" && (!tls.clientCertificate || !tls.privateKey)) return undefined;
  const sans = tls.subjectAltNames ?? (t.external ? t.serviceAccounts : []);
  // setAutoSniAndAutoSanValidation: both only when the rule names no SNI.
  if (!tls.sni) {
    const autoSan = (tls.subjectAltNames?.length ?? 0) === 0 && !tls.insecureSkipVerify;
    d.http = { ...d.http, autoSni: true, ...(autoSan && { autoSanValidation: true as const }) };
  }
  const ca = tls.caCertificates ?? "system";
  const h2 = d.http?.upstream === "h2";
  return create(UpstreamTlsContextSchema, {
    sni: tls.sni ?? "",
    commonTlsContext: create(CommonTlsContextSchema, {
      tlsParams: tlsParams(),
      tlsCertificateSdsSecretConfigs:
        tls.mode === "MUTUAL" ? [sds(`file-cert:${tls.clientCertificate}~${tls.privateKey}`, false)] : [],
      validationContextType: tls.insecureSkipVerify
        ? { case: "validationContext", value: create(CertificateValidationContextSchema) }
        : {
            case: "combinedValidationContext",
            value: create(CommonTlsContext_CombinedCertificateValidationContextSchema, {
              defaultValidationContext: create(CertificateValidationContextSchema, {
                matchSubjectAltNames: sans.map((s) =>
                  create(StringMatcherSchema, { matchPattern: { case: "exact", value: s } }),
                ),
              }),
              validationContextSdsSecretConfig: sds(`file-root:${ca}`, false),
            }),
          },
      alpnProtocols: h2 ? ["h2"] : [],
    }),
  });
}

/** defaultUpstreamCommonTLSContext: TLS 1.2 to 1.3. */
function tlsParams() {
  return create(TlsParametersSchema, {
    tlsMinimumProtocolVersion: TlsParameters_TlsProtocol.TLSv1_2,
    tlsMaximumProtocolVersion: TlsParameters_TlsProtocol.TLSv1_3,
  });
}

/** ConstructSdsSecretConfig: over gRPC to sds-grpc; `default` and `ROOTCA` wait for nothing (0s). */
export function sds(name: string, wellKnown: boolean) {
  return create(SdsSecretConfigSchema, {
    name,
    sdsConfig: create(ConfigSourceSchema, {
      configSourceSpecifier: {
        case: "apiConfigSource",
        value: create(ApiConfigSourceSchema, {
          apiType: ApiConfigSource_ApiType.GRPC,
          setNodeOnFirstMessageOnly: true,
          transportApiVersion: ApiVersion.V3,
          grpcServices: [
            create(GrpcServiceSchema, {
              targetSpecifier: {
                case: "envoyGrpc",
                value: create(GrpcService_EnvoyGrpcSchema, { clusterName: SDS_CLUSTER }),
              },
            }),
          ],
        }),
      },
      resourceApiVersion: ApiVersion.V3,
      ...(wellKnown && { initialFetchTimeout: durationOf(0) }),
    }),
  });
}

function tlsSocket(ctx: ReturnType<typeof istioMutual>): Cluster["transportSocket"] {
  return create(TransportSocketSchema, {
    name: "envoy.transport_sockets.tls",
    configType: { case: "typedConfig", value: anyPack(UpstreamTlsContextSchema, ctx) },
  });
}
