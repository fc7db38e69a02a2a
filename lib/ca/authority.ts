/**
 * CreateCertificate as istiod's CA server answers it (security/pkg/server/ca/server.go): count the
 * CSR, authenticate the caller's service-account token (TOKEN_AUDIENCES), build its SPIFFE ID
 * `spiffe://<trust domain>/ns/<namespace>/sa/<service account>` from the token alone, sign, count
 * the outcome. Refusals carry istiod's codes (Unauthenticated for the caller, InvalidArgument for
 * the CSR or TTL, Internal for the CA) and a message saying what was wrong; each is logged.
 * Transport-free: functions/ca.ts maps the answer to a Connect or gRPC status.
 */
import type { AuthResult } from "../auth/guard.ts";
import type { Identity } from "../auth/identity.ts";
import { logWarn } from "../log/line-log.ts";
import { logSafe } from "../log-safe.ts";
import type { CaBundle } from "./bundle.ts";
import { type CaErrorType, signCsr, type TtlPolicy } from "./sign.ts";

/** What CreateCertificate reports, for istiod's citadel_server_* metrics (lib/metrics/ca-metrics.ts). */
export interface CaObserver {
  /** A request arrived (citadel_server_csr_count). */
  csr(): void;
  /** Its caller was not authenticated (citadel_server_authentication_failure_count). */
  authnFailure(): void;
  /** Signing failed (citadel_server_csr_sign_err_count{error}). */
  signError(type: CaErrorType): void;
  /** A certificate was issued (citadel_server_success_cert_issuance_count). */
  success(): void;
}

/** The fields of an IstioCertificateRequest the CA reads. */
export interface CertificateRequest {
  csr: string;
  /** validity_duration, in seconds. */
  validityDuration: bigint | number;
  /** metadata.ImpersonatedIdentity: refused, as istiod without CA_TRUSTED_NODE_ACCOUNTS. */
  impersonatedIdentity?: string;
}

/** The certificate chain, or a refusal with its status. */
export type CaAnswer =
  | { ok: true; certChain: string[] }
  | { ok: false; code: "unauthenticated" | "invalid-argument" | "internal"; message: string };

/** The CA a transport calls. */
export interface CertificateAuthority {
  readonly bundle: CaBundle;
  createCertificate(request: CertificateRequest, authorization: string | null | undefined): Promise<CaAnswer>;
}

/** What the CA is built from. */
export interface CertificateAuthorityOptions {
  bundle: CaBundle;
  /** The token check with the CA's audiences (lib/auth's XdsGuard.authenticate). */
  authenticate: (authorization: string | null | undefined) => Promise<AuthResult>;
  /**
   * The trust domain of the identities signed: a value, or read per request (the mesh's effective
   * trustDomain, so certificates follow the cluster's MeshConfig as the proxies' SANs do).
   */
  trustDomain: string | (() => Promise<string>);
  ttl: TtlPolicy;
  now: () => number;
  log?: (line: string) => void;
  observer?: CaObserver;
}

/** The SPIFFE ID of a namespace and service account in `trustDomain`. */
export function spiffeId(trustDomain: string, namespace: string, serviceAccount: string): string {
  return `spiffe://${trustDomain}/ns/${namespace}/sa/${serviceAccount}`;
}

/** Builds the CA. */
export function createCertificateAuthority(options: CertificateAuthorityOptions): CertificateAuthority {
  const { observer, bundle } = options;
  const warn = (line: string) => options.log && logWarn(options.log, line);
  const unauthenticated = (why: string): CaAnswer => {
    observer?.authnFailure();
    warn(`ca: refused CreateCertificate: ${why}`);
    return { ok: false, code: "unauthenticated", message: `request authenticate failure: ${why}` };
  };
  return {
    bundle,
    async createCertificate(request, authorization) {
      observer?.csr();
      const auth = await options.authenticate(authorization);
      // lib/auth names the xDS audience variable; the CA's audiences come from TOKEN_AUDIENCES.
      if (!auth.ok) return unauthenticated(auth.message.replace("XDS_JWT_AUDIENCE", "TOKEN_AUDIENCES"));
      const who = workloadOf(auth.identity);
      if (!who.ok) return unauthenticated(who.error);
      if (request.impersonatedIdentity)
        return unauthenticated(
          "request impersonation authentication failure: impersonation is not allowed (no trusted node accounts)",
        );
      const domain =
        typeof options.trustDomain === "string" ? options.trustDomain : await options.trustDomain();
      const identity = spiffeId(domain, who.namespace, who.serviceAccount);
      const result = await signCsr(
        bundle,
        { csrPem: request.csr, identity, requestedMs: secondsToMs(request.validityDuration) },
        options.ttl,
        options.now(),
      );
      if (!result.ok) {
        observer?.signError(result.error.type);
        warn(
          `ca: CSR signing error for ${identity} (${result.error.type}): ${logSafe(result.error.message, 512)}`,
        );
        return {
          ok: false,
          code:
            result.error.type === "CSR_ERROR" || result.error.type === "TTL_ERROR"
              ? "invalid-argument"
              : "internal",
          message: `CSR signing error (${result.error.message})`,
        };
      }
      observer?.success();
      return { ok: true, certChain: result.certChain };
    },
  };
}

/** The namespace and service account a verified token names; both are required for a workload identity. */
function workloadOf(
  identity: Identity,
): { ok: true; namespace: string; serviceAccount: string } | { ok: false; error: string } {
  if (identity.method !== "jwt" || !identity.namespace)
    return { ok: false, error: "the caller is not a Kubernetes service account (no namespace in its token)" };
  if (!identity.serviceAccount)
    return {
      ok: false,
      error: `the token names no service account (sub ${logSafe(identity.subject, 128)}): expected system:serviceaccount:<namespace>:<name>`,
    };
  // Kubernetes names are DNS labels/subdomains; anything else would make a SPIFFE ID with more path segments.
  for (const name of [identity.namespace, identity.serviceAccount])
    if (!k8sName.test(name))
      return { ok: false, error: `the token names ${logSafe(name, 64)}: not a Kubernetes name` };
  return { ok: true, namespace: identity.namespace, serviceAccount: identity.serviceAccount };
}

const k8sName = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** validity_duration (seconds, int64) in ms; values beyond any TTL stay beyond it. */
function secondsToMs(seconds: bigint | number): number {
  const n = Number(seconds);
  return Number.isFinite(n) ? n * 1000 : Number.MAX_SAFE_INTEGER;
}
