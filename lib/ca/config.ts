/**
 * The certificate authority's settings, with istiod's names and defaults
 * (pilot/pkg/bootstrap/istio_ca.go, pkg/security/security.go, security/pkg/cmd/constants.go).
 * lib/config.ts reads them from the environment.
 */
import type { PluginCaFiles } from "./bundle.ts";

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

/** A variable holding one plug-in file as text, where a host has no ROOT_CA_DIR to read. */
export type PluginCaVariable = "CA_CERT_PEM" | "CA_KEY_PEM" | "CERT_CHAIN_PEM" | "ROOT_CERT_PEM";

/**
 * The variables of Istio's plug-in CA files, in the layout's order: the Worker's secrets and the
 * Lambda's (filled from Secrets Manager) carry the same four, so both hosts check them alike.
 */
export const pluginCaVariables = {
  "ca-cert.pem": "CA_CERT_PEM",
  "ca-key.pem": "CA_KEY_PEM",
  "cert-chain.pem": "CERT_CHAIN_PEM",
  "root-cert.pem": "ROOT_CERT_PEM",
} as const satisfies Readonly<Record<keyof PluginCaFiles, PluginCaVariable>>;
