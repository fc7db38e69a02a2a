/**
 * The mTLS of a sidecar's inbound chains, as istiod builds it (pilot/pkg/networking/core
 * filterchain_options.go getFilterChainMatchOptions, listener.go's ALPN sets; pilot/pkg/security/authn
 * policy_applier.go InboundMTLSSettings, utils BuildInboundTLS; pilot/pkg/security/model
 * ApplyToCommonTLSContext; plugin/authn TrustDomainsForValidation): which chains a port gets under
 * its PeerAuthentication mode (STRICT: TLS only, PERMISSIVE: TLS and plaintext, DISABLE: plaintext),
 * how each matches (transport protocol, ALPN), and the DownstreamTlsContext the TLS ones terminate
 * with: the workload certificate `default` and the root `ROOTCA` over SDS, a client certificate
 * required from the mesh's trust domains.
 */
import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { TransportSocketSchema } from "../../../gen/envoy/config/core/v3/base_pb.ts";
import type { FilterChain } from "../../../gen/envoy/config/listener/v3/listener_components_pb.ts";
import {
  CertificateValidationContextSchema,
  TlsParameters_TlsProtocol,
  TlsParametersSchema,
} from "../../../gen/envoy/extensions/transport_sockets/tls/v3/common_pb.ts";
import {
  CommonTlsContext_CombinedCertificateValidationContextSchema,
  CommonTlsContextSchema,
  DownstreamTlsContextSchema,
} from "../../../gen/envoy/extensions/transport_sockets/tls/v3/tls_pb.ts";
import { StringMatcherSchema } from "../../../gen/envoy/type/matcher/v3/string_pb.ts";
import type { MergedPeerAuthentication, MtlsMode, PolicyWorkload } from "../../../registry/istio/security.ts";
import { deepFreeze } from "../shared.ts";
import { sds } from "./cluster-tls.ts";
import { PLAINTEXT_HTTP_ALPNS, RAW_BUFFER } from "./listener-filters.ts";
import type { SidecarInputs, SidecarMeshSettings } from "./types.ts";

/** A port's effective mode (UNSET never reaches a chain). */
export type InboundMode = Exclude<MtlsMode, "UNSET">;

/** xdsfilters.TLSTransportProtocol: what the TLS inspector reports for a TLS connection. */
export const TLS_TRANSPORT = "tls";
/** mtlsHTTPALPNs: what an Istio client offers when its outbound side detected HTTP. */
const MTLS_HTTP_ALPNS = ["istio-http/1.0", "istio-http/1.1", "istio-h2"];
/** allIstioMtlsALPNs. */
const ALL_ISTIO_MTLS_ALPNS = ["istio", "istio-peer-exchange", "istio-http/1.0", "istio-http/1.1", "istio-h2"];
/** mtlsTCPWithMxcALPNs: an Istio client that could not detect the protocol. */
const MTLS_TCP_ALPNS = ["istio-peer-exchange", "istio"];
/** util.ALPNHttp: what an HTTP chain's server negotiates ("istio" would break HTTP/2 negotiation). */
const ALPN_HTTP = ["h2", "http/1.1"];
/** util.ALPNDownstreamWithMxc: a TCP chain's (metadata exchange on, Istio's default). */
const ALPN_DOWNSTREAM_MXC = ["istio-peer-exchange", "h2", "http/1.1"];
/** authn utils SupportedCiphers: the mesh's default cipher suites for inbound mTLS. */
const SUPPORTED_CIPHERS = [
  "ECDHE-ECDSA-AES256-GCM-SHA384",
  "ECDHE-RSA-AES256-GCM-SHA384",
  "ECDHE-ECDSA-AES128-GCM-SHA256",
  "ECDHE-RSA-AES128-GCM-SHA256",
  "AES256-GCM-SHA384",
  "AES128-GCM-SHA256",
];

/** One filter chain a port gets (FilterChainMatchOptions): its terminal protocol and match; `tls` terminates mTLS. */
export interface ChainOption {
  protocol: "http" | "tcp";
  transportProtocol: string;
  applicationProtocols?: readonly string[];
  tls?: true;
}

const o = (
  protocol: ChainOption["protocol"],
  transportProtocol: string,
  applicationProtocols?: readonly string[],
  tls?: true,
): ChainOption =>
  deepFreeze({
    protocol,
    transportProtocol,
    ...(applicationProtocols && { applicationProtocols }),
    ...(tls && { tls }),
  });

/** getFilterChainMatchOptions: per port kind (`sniffed` is istiod's Auto) and mode, in istiod's order. */
const options: Record<"http" | "tcp" | "sniffed", Record<InboundMode, readonly ChainOption[]>> = {
  http: {
    STRICT: [o("http", TLS_TRANSPORT, undefined, true)],
    PERMISSIVE: [o("http", TLS_TRANSPORT, ALL_ISTIO_MTLS_ALPNS, true), o("http", RAW_BUFFER)],
    DISABLE: [o("http", RAW_BUFFER)],
  },
  sniffed: {
    STRICT: [o("http", TLS_TRANSPORT, MTLS_HTTP_ALPNS, true), o("tcp", TLS_TRANSPORT, undefined, true)],
    PERMISSIVE: [
      o("http", TLS_TRANSPORT, MTLS_HTTP_ALPNS, true),
      o("http", RAW_BUFFER, PLAINTEXT_HTTP_ALPNS),
      o("tcp", TLS_TRANSPORT, MTLS_TCP_ALPNS, true),
      o("tcp", RAW_BUFFER),
      // One-way TLS from a client without a sidecar: passed through as TCP, not terminated.
      o("tcp", TLS_TRANSPORT),
    ],
    DISABLE: [o("http", RAW_BUFFER, PLAINTEXT_HTTP_ALPNS), o("tcp", RAW_BUFFER)],
  },
  tcp: {
    STRICT: [o("tcp", TLS_TRANSPORT, undefined, true)],
    PERMISSIVE: [
      o("tcp", TLS_TRANSPORT, ALL_ISTIO_MTLS_ALPNS, true),
      o("tcp", TLS_TRANSPORT),
      o("tcp", RAW_BUFFER),
    ],
    DISABLE: [o("tcp", RAW_BUFFER)],
  },
};

/** The chains of a port of `kind` under `mode` (getFilterChainMatchOptions). */
export function chainOptions(kind: "http" | "tcp" | "sniffed", mode: InboundMode): readonly ChainOption[] {
  return options[kind][mode];
}

/** The workload a proxy is, as policies select it: its namespace and LABELS. */
export function policyWorkload(inputs: SidecarInputs): PolicyWorkload {
  return { namespace: inputs.proxy.namespace, labels: inputs.proxy.metadata.labels };
}

/** The proxy's effective PeerAuthentication (PERMISSIVE without policies, as istiod's default). */
export function inboundMtls(inputs: SidecarInputs): MergedPeerAuthentication {
  return inputs.security?.mtlsFor(policyWorkload(inputs)) ?? { mode: "PERMISSIVE" };
}

/** GetMutualTLSModeForPort: the port-level mode of a workload policy, else the workload's. */
export function modeForPort(mtls: MergedPeerAuthentication, port: number): InboundMode {
  return mtls.perPort?.[port] ?? mtls.mode;
}

/** The TLS transport sockets of one mesh's inbound chains, by chain protocol. */
export interface InboundTlsSockets {
  http: NonNullable<FilterChain["transportSocket"]>;
  tcp: NonNullable<FilterChain["transportSocket"]>;
}

/** BuildInboundTLS for both chain protocols (they differ in ALPN only). */
export function inboundTlsSockets(mesh: SidecarMeshSettings): InboundTlsSockets {
  return { http: tlsSocket(mesh, ALPN_HTTP), tcp: tlsSocket(mesh, ALPN_DOWNSTREAM_MXC) };
}

/**
 * TrustDomainsForValidation: the trust domain then its aliases, unique, each as a SPIFFE prefix
 * (`spiffe://<td>/`) a client certificate's SAN must start with.
 */
function trustDomainMatchers(mesh: SidecarMeshSettings) {
  const domains = [mesh.trustDomain ?? "cluster.local", ...(mesh.trustDomainAliases ?? [])];
  const unique = [...new Set(domains.filter((d) => d !== ""))];
  return unique.map((d) =>
    create(StringMatcherSchema, { matchPattern: { case: "prefix", value: `spiffe://${d}/` } }),
  );
}

function tlsSocket(mesh: SidecarMeshSettings, alpn: readonly string[]) {
  const ctx = create(DownstreamTlsContextSchema, {
    commonTlsContext: create(CommonTlsContextSchema, {
      tlsParams: create(TlsParametersSchema, {
        tlsMinimumProtocolVersion: TlsParameters_TlsProtocol.TLSv1_2,
        tlsMaximumProtocolVersion: TlsParameters_TlsProtocol.TLSv1_3,
        cipherSuites: [...SUPPORTED_CIPHERS],
      }),
      tlsCertificateSdsSecretConfigs: [sds("default", true)],
      validationContextType: {
        case: "combinedValidationContext",
        value: create(CommonTlsContext_CombinedCertificateValidationContextSchema, {
          defaultValidationContext: create(CertificateValidationContextSchema, {
            matchSubjectAltNames: trustDomainMatchers(mesh),
          }),
          validationContextSdsSecretConfig: sds("ROOTCA", true),
        }),
      },
      alpnProtocols: [...alpn],
    }),
    requireClientCertificate: true,
  });
  return deepFreeze(
    create(TransportSocketSchema, {
      name: "envoy.transport_sockets.tls",
      configType: { case: "typedConfig", value: anyPack(DownstreamTlsContextSchema, ctx) },
    }),
  );
}
