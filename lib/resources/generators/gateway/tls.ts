/**
 * The DownstreamTlsContext a gateway server terminates TLS with, as istiod builds it
 * (pilot/pkg/networking/core/listener.go BuildListenerTLSContext, applyServerTLSSettings;
 * pilot/pkg/security/model/authentication.go ApplyCredentialSDSToServerCommonTLSContext,
 * ConstructSdsSecretConfigForCredential, ApplyToCommonTLSContext): a `credentialName` is the SDS
 * resource `kubernetes://<name>` fetched over ADS (`-cacert` beside it validates MUTUAL clients);
 * ISTIO_MUTUAL serves the workload certificate `default` and the root `ROOTCA` from the agent's
 * SDS socket, as sidecars get them; file-mounted certificates are named as the agent serves files.
 */
import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { TransportSocketSchema } from "../../../gen/envoy/config/core/v3/base_pb.ts";
import {
  AggregatedConfigSourceSchema,
  ApiVersion,
  ConfigSourceSchema,
} from "../../../gen/envoy/config/core/v3/config_source_pb.ts";
import type { FilterChain } from "../../../gen/envoy/config/listener/v3/listener_components_pb.ts";
import {
  CertificateValidationContextSchema,
  TlsParameters_TlsProtocol,
  TlsParametersSchema,
} from "../../../gen/envoy/extensions/transport_sockets/tls/v3/common_pb.ts";
import { SdsSecretConfigSchema } from "../../../gen/envoy/extensions/transport_sockets/tls/v3/secret_pb.ts";
import {
  CommonTlsContext_CombinedCertificateValidationContextSchema,
  CommonTlsContextSchema,
  DownstreamTlsContextSchema,
} from "../../../gen/envoy/extensions/transport_sockets/tls/v3/tls_pb.ts";
import { StringMatcherSchema } from "../../../gen/envoy/type/matcher/v3/string_pb.ts";
import type { GatewayServer, ServerTls, TlsProtocolVersion } from "../../../registry/istio/gateway.ts";
import { sds } from "../sidecar/cluster-tls.ts";

/** credentials.KubernetesSecretType: the prefix of a Kubernetes Secret's SDS resource name. */
export const KUBERNETES_SECRET_PREFIX = "kubernetes://";
/** credentials.SdsCaSuffix: the validation context of a credential. */
export const SDS_CA_SUFFIX = "-cacert";
/** credentials.BuiltinGatewaySecretTypeURI: the gateway's own workload certificate. */
const BUILTIN = "builtin://";

/** util.ALPNHttp: what an HTTPS server negotiates. */
const ALPN_HTTP = ["h2", "http/1.1"];
/** util.ALPNDownstreamWithMxc: an ISTIO_MUTUAL TCP server's. */
const ALPN_DOWNSTREAM_MXC = ["istio-peer-exchange", "h2", "http/1.1"];

/** credentials.ToResourceName: a name without a known scheme is a Kubernetes Secret's. */
export function credentialResourceName(name: string): string {
  if (name.startsWith(BUILTIN) || name.startsWith(KUBERNETES_SECRET_PREFIX) || name.includes("://"))
    return name;
  return `${KUBERNETES_SECRET_PREFIX}${name}`;
}

/**
 * The SDS resource names a gateway server's TLS asks the control plane for over ADS (`credentialName`
 * ones, `-cacert` for MUTUAL and OPTIONAL_MUTUAL), in the order its context names them.
 */
export function credentialResources(tls: ServerTls | undefined): string[] {
  if (!tls || tls.mode === "ISTIO_MUTUAL" || tls.credentialNames.length === 0) return [];
  const out = tls.credentialNames.filter((n) => !n.startsWith(BUILTIN)).map(credentialResourceName);
  const first = tls.credentialNames[0] as string;
  if ((tls.mode === "MUTUAL" || tls.mode === "OPTIONAL_MUTUAL") && !first.startsWith(BUILTIN))
    out.push(`${credentialResourceName(first)}${SDS_CA_SUFFIX}`);
  return out;
}

/** SDSAdsConfig: over the ADS stream, v3, no initial fetch timeout (the listener waits for it). */
const adsSds = create(ConfigSourceSchema, {
  configSourceSpecifier: { case: "ads", value: create(AggregatedConfigSourceSchema) },
  resourceApiVersion: ApiVersion.V3,
});

/** ConstructSdsSecretConfigForCredential (no credential socket, no external SDS provider). */
function credentialSds(name: string) {
  if (name === BUILTIN) return sds("default", true);
  if (name === `${BUILTIN}${SDS_CA_SUFFIX}`) return sds("ROOTCA", true);
  return create(SdsSecretConfigSchema, { name: credentialResourceName(name), sdsConfig: adsSds });
}

const exact = (names: readonly string[]) =>
  names.map((n) => create(StringMatcherSchema, { matchPattern: { case: "exact", value: n } }));

const protocols: Readonly<Record<TlsProtocolVersion, TlsParameters_TlsProtocol>> = {
  TLS_AUTO: TlsParameters_TlsProtocol.TLS_AUTO,
  TLSV1_0: TlsParameters_TlsProtocol.TLSv1_0,
  TLSV1_1: TlsParameters_TlsProtocol.TLSv1_1,
  TLSV1_2: TlsParameters_TlsProtocol.TLSv1_2,
  TLSV1_3: TlsParameters_TlsProtocol.TLSv1_3,
};

/**
 * BuildListenerTLSContext for a terminating server (undefined for none or passthrough), packed as
 * the chain's transport socket. `tcp`: a TCP server terminating TLS (ISTIO_MUTUAL then offers the
 * metadata-exchange ALPN).
 */
export function serverTransportSocket(
  server: GatewayServer,
  tcp: boolean,
): FilterChain["transportSocket"] | undefined {
  const t = server.tls;
  if (!t || t.mode === "PASSTHROUGH" || t.mode === "AUTO_PASSTHROUGH") return undefined;
  const common = create(CommonTlsContextSchema, {
    alpnProtocols: [...(tcp && t.mode === "ISTIO_MUTUAL" ? ALPN_DOWNSTREAM_MXC : ALPN_HTTP)],
  });
  const requireClient = t.mode === "MUTUAL" || t.mode === "ISTIO_MUTUAL";
  const validateClient = requireClient || t.mode === "OPTIONAL_MUTUAL";
  if (t.mode === "ISTIO_MUTUAL") {
    workloadCertificates(common, "", "", t.subjectAltNames, validateClient);
  } else if (t.credentialNames.length > 0) {
    common.tlsCertificateSdsSecretConfigs = t.credentialNames.map(credentialSds);
    if (validateClient) {
      common.validationContextType = {
        case: "combinedValidationContext",
        value: create(CommonTlsContext_CombinedCertificateValidationContextSchema, {
          defaultValidationContext: create(CertificateValidationContextSchema, {
            matchSubjectAltNames: exact(t.subjectAltNames),
            verifyCertificateSpki: [...t.verifyCertificateSpki],
            verifyCertificateHash: [...t.verifyCertificateHash],
          }),
          validationContextSdsSecretConfig: credentialSds(`${t.credentialNames[0]}${SDS_CA_SUFFIX}`),
        }),
      };
    } else if (t.subjectAltNames.length > 0) {
      common.validationContextType = {
        case: "validationContext",
        value: create(CertificateValidationContextSchema, { matchSubjectAltNames: exact(t.subjectAltNames) }),
      };
    }
  } else {
    const f = t.files;
    const cert =
      f.serverCertificate && f.privateKey ? `file-cert:${f.serverCertificate}~${f.privateKey}` : "";
    workloadCertificates(
      common,
      cert,
      f.caCertificates ? `file-root:${f.caCertificates}` : "",
      t.subjectAltNames,
      validateClient,
    );
  }
  if (t.mode === "SIMPLE" || t.mode === "MUTUAL" || t.mode === "OPTIONAL_MUTUAL")
    applyServerSettings(common, t);
  const ctx = create(DownstreamTlsContextSchema, {
    commonTlsContext: common,
    requireClientCertificate: requireClient,
  });
  return create(TransportSocketSchema, {
    name: "envoy.transport_sockets.tls",
    configType: { case: "typedConfig", value: anyPack(DownstreamTlsContextSchema, ctx) },
  });
}

/** ApplyToCommonTLSContext: `cert` (else `default`) and, validating clients, `root` (else `ROOTCA`) over the agent's SDS. */
function workloadCertificates(
  common: ReturnType<typeof create<typeof CommonTlsContextSchema>>,
  cert: string,
  root: string,
  subjectAltNames: readonly string[],
  validateClient: boolean,
): void {
  common.tlsCertificateSdsSecretConfigs = [cert ? sds(cert, false) : sds("default", true)];
  if (!validateClient) return;
  common.validationContextType = {
    case: "combinedValidationContext",
    value: create(CommonTlsContext_CombinedCertificateValidationContextSchema, {
      defaultValidationContext: create(CertificateValidationContextSchema, {
        matchSubjectAltNames: exact(subjectAltNames),
      }),
      validationContextSdsSecretConfig: root ? sds(root, false) : sds("ROOTCA", true),
    }),
  };
}

/** applyServerTLSSettings: the server's minimum and maximum versions and cipher suites, when set. */
function applyServerSettings(
  common: ReturnType<typeof create<typeof CommonTlsContextSchema>>,
  t: ServerTls,
): void {
  const min = t.minProtocolVersion;
  const max = t.maxProtocolVersion;
  if (min === "TLS_AUTO" && max === "TLS_AUTO" && t.cipherSuites.length === 0) return;
  common.tlsParams = create(TlsParametersSchema, {
    ...(min !== "TLS_AUTO" && { tlsMinimumProtocolVersion: protocols[min] }),
    ...(max !== "TLS_AUTO" && { tlsMaximumProtocolVersion: protocols[max] }),
    ...(t.cipherSuites.length > 0 && { cipherSuites: [...t.cipherSuites] }),
  });
}
