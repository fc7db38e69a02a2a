/**
 * The certificate authority's settings, with istiod's names and defaults
 * (pilot/pkg/bootstrap/istio_ca.go, pkg/security/security.go, security/pkg/cmd/constants.go).
 * lib/config.ts reads them from the environment.
 */

/** What the CA is configured with. */
export interface CaSettings {
  /** ENABLE_CA_SERVER (default true): serve IstioCertificateService at all. */
  enabled: boolean;
  /** ROOT_CA_DIR: a plug-in CA (ca-cert.pem, ca-key.pem, cert-chain.pem, root-cert.pem); absent: a stored self-signed root. */
  rootCaDir?: string;
  /** DEFAULT_WORKLOAD_CERT_TTL (24h): the TTL of a request that asks for none. */
  defaultWorkloadCertTtlMs: number;
  /** MAX_WORKLOAD_CERT_TTL (90 days): longer requests are refused; the default is capped by it. */
  maxWorkloadCertTtlMs: number;
  /** CITADEL_SELF_SIGNED_CA_CERT_TTL (10 years): the self-signed root's lifetime. */
  selfSignedCaCertTtlMs: number;
  /** TOKEN_AUDIENCES (istio-ca): a caller's token must be for one of these. */
  tokenAudiences: string[];
}

const hour = 3_600_000;

/** istiod's defaults. */
export const defaultCaSettings: CaSettings = {
  enabled: true,
  defaultWorkloadCertTtlMs: 24 * hour,
  maxWorkloadCertTtlMs: 90 * 24 * hour,
  selfSignedCaCertTtlMs: 3650 * 24 * hour,
  tokenAudiences: ["istio-ca"],
};
