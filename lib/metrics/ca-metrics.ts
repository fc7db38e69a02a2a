/**
 * The certificate authority's metrics with istiod's names and help (security/pkg/server/ca/monitoring.go),
 * so Citadel dashboards and alerts work: requests, authentication failures, signing errors by
 * istiod's error type, issued certificates, and the expiry of the root and of the signing chain.
 */

import type { CaObserver } from "../ca/authority.ts";
import type { CaBundle } from "../ca/bundle.ts";
import type { CaErrorType } from "../ca/sign.ts";
import type { Registry } from "./registry.ts";

/** Declares the citadel_server_* metrics on `registry`; the observer feeds them, `bundle` sets the expiry gauges. */
export function createCaMetrics(registry: Registry, bundle: CaBundle, now: () => number): CaObserver {
  const csr = registry
    .counter({ name: "citadel_server_csr_count", help: "The number of CSRs received by Citadel server." })
    .labels();
  const authn = registry
    .counter({
      name: "citadel_server_authentication_failure_count",
      help: "The number of authentication failures.",
    })
    .labels();
  const signErrors = registry.counter({
    name: "citadel_server_csr_sign_err_count",
    help: "The number of errors occurred when signing the CSR.",
    labelNames: ["error"],
  });
  const success = registry
    .counter({
      name: "citadel_server_success_cert_issuance_count",
      help: "The number of certificates issuances that have succeeded.",
    })
    .labels();
  // The first root of root-cert.pem, as istiod's ExtractRootCertExpiryTimestamp.
  const rootExpiry = bundle.rootCert.notAfter.getTime();
  const chainExpiry = bundle.certChainPem === "" ? undefined : bundle.signingCert.notAfter.getTime();
  registry
    .gauge({
      name: "citadel_server_root_cert_expiry_timestamp",
      help: "The unix timestamp, in seconds, when the root cert will expire.",
    })
    .labels()
    .set(rootExpiry / 1000);
  const rootSeconds = registry
    .gauge({
      name: "citadel_server_root_cert_expiry_seconds",
      help: "The time remaining, in seconds, before the root cert will expire. A negative value indicates the cert is expired.",
    })
    .labels();
  if (chainExpiry !== undefined) {
    registry
      .gauge({
        name: "citadel_server_cert_chain_expiry_timestamp",
        help: "The unix timestamp, in seconds, when Istio generated cert chain will expire.",
      })
      .labels()
      .set(chainExpiry / 1000);
    const chainSeconds = registry
      .gauge({
        name: "citadel_server_cert_chain_expiry_seconds",
        help: "The time remaining, in seconds, before the Istio Generated cert chain will expire. A negative value indicates the cert is expired.",
      })
      .labels();
    registry.collect(() => chainSeconds.set(Math.round((chainExpiry - now()) / 1000)));
  }
  registry.collect(() => rootSeconds.set(Math.round((rootExpiry - now()) / 1000)));
  const byType = new Map<CaErrorType, ReturnType<typeof signErrors.labels>>();
  return {
    csr: () => csr.inc(),
    authnFailure: () => authn.inc(),
    signError(type) {
      let child = byType.get(type);
      if (!child) {
        child = signErrors.labels(type);
        byType.set(type, child);
      }
      child.inc();
    },
    success: () => success.inc(),
  };
}
