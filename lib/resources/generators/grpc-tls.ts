/**
 * TLS for proxyless gRPC, as Istio's grpcgen writes it (pilot/pkg/networking/grpcgen/grpcgen.go
 * buildCommonTLSContext, cds.go applyTLS): certificates come from the gRPC bootstrap's certificate
 * provider instance `default` (the workload's own under `default`, the mesh root under `ROOTCA`),
 * named in both the current fields and the deprecated ones older gRPC clients read (gRFC A29).
 * Nothing is inlined: the workload holds its keys, the control plane names them.
 */
import { create } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { type TransportSocket, TransportSocketSchema } from "../../gen/envoy/config/core/v3/base_pb.ts";
import {
  CertificateProviderPluginInstanceSchema,
  CertificateValidationContextSchema,
} from "../../gen/envoy/extensions/transport_sockets/tls/v3/common_pb.ts";
import { SdsSecretConfigSchema } from "../../gen/envoy/extensions/transport_sockets/tls/v3/secret_pb.ts";
import {
  type CommonTlsContext,
  CommonTlsContext_CertificateProviderInstanceSchema,
  CommonTlsContext_CombinedCertificateValidationContextSchema,
  CommonTlsContextSchema,
  DownstreamTlsContextSchema,
  UpstreamTlsContextSchema,
} from "../../gen/envoy/extensions/transport_sockets/tls/v3/tls_pb.ts";
import { StringMatcherSchema } from "../../gen/envoy/type/matcher/v3/string_pb.ts";

/** The transport socket name gRPC requires of a TLS socket (grpcgen transportSocketName). */
export const TLS_TRANSPORT_SOCKET = "envoy.transport_sockets.tls";
/** The bootstrap certificate provider instance every context names (the agent writes its files). */
export const CERTIFICATE_PROVIDER = "default";
/** The provider's certificate name for the workload's own identity (chain and key). */
export const IDENTITY_CERTIFICATE = "default";
/** The provider's certificate name for the mesh root peers are checked against. */
export const ROOT_CERTIFICATE = "ROOTCA";

/**
 * buildCommonTLSContext: identity and root from provider `default`, in the current fields (14 and
 * the default validation context's ca_certificate_provider_instance) and the deprecated ones (11 and
 * the combined context's field 4); `sans` become exact SAN matchers (none: any peer the root signed).
 * The combined context also names the root as an SDS secret, which every gRPC (C-core, Go, Java,
 * grpc-js-xds) ignores there and istiod leaves out: Envoy's validation rules require it, and a
 * resource that passes them is one any xDS tool accepts.
 */
export function commonTlsContext(sans: readonly string[]): CommonTlsContext {
  const plugin = (certificateName: string) =>
    create(CertificateProviderPluginInstanceSchema, { instanceName: CERTIFICATE_PROVIDER, certificateName });
  const deprecated = (certificateName: string) =>
    create(CommonTlsContext_CertificateProviderInstanceSchema, {
      instanceName: CERTIFICATE_PROVIDER,
      certificateName,
    });
  return create(CommonTlsContextSchema, {
    tlsCertificateProviderInstance: plugin(IDENTITY_CERTIFICATE),
    tlsCertificateCertificateProviderInstance: deprecated(IDENTITY_CERTIFICATE),
    validationContextType: {
      case: "combinedValidationContext",
      value: create(CommonTlsContext_CombinedCertificateValidationContextSchema, {
        validationContextCertificateProviderInstance: deprecated(ROOT_CERTIFICATE),
        validationContextSdsSecretConfig: create(SdsSecretConfigSchema, { name: ROOT_CERTIFICATE }),
        defaultValidationContext: create(CertificateValidationContextSchema, {
          matchSubjectAltNames: sans.map((s) =>
            create(StringMatcherSchema, { matchPattern: { case: "exact", value: s } }),
          ),
          caCertificateProviderInstance: plugin(ROOT_CERTIFICATE),
        }),
      }),
    },
  });
}

/** A Cluster's transport_socket for ISTIO_MUTUAL: an UpstreamTlsContext that accepts only `sans`. */
export function upstreamTlsSocket(sans: readonly string[]): TransportSocket {
  return create(TransportSocketSchema, {
    name: TLS_TRANSPORT_SOCKET,
    configType: {
      case: "typedConfig",
      value: anyPack(
        UpstreamTlsContextSchema,
        create(UpstreamTlsContextSchema, { commonTlsContext: commonTlsContext(sans) }),
      ),
    },
  });
}

/**
 * A server filter chain's transport_socket for STRICT: a DownstreamTlsContext that requires a client
 * certificate the mesh root signed (gRPC servers take no SAN matcher: authorization is RBAC's).
 */
export function downstreamTlsSocket(): TransportSocket {
  return create(TransportSocketSchema, {
    name: TLS_TRANSPORT_SOCKET,
    configType: {
      case: "typedConfig",
      value: anyPack(
        DownstreamTlsContextSchema,
        create(DownstreamTlsContextSchema, {
          commonTlsContext: commonTlsContext([]),
          requireClientCertificate: true,
        }),
      ),
    },
  });
}
