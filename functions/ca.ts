/**
 * istio.v1.auth.IstioCertificateService on a Connect router, runtime-neutral: gRPC, gRPC-Web and
 * Connect clients call CreateCertificate at its canonical path. The CA authenticates the caller
 * itself (its own audiences, TOKEN_AUDIENCES), so these routes sit outside XDS_AUTH's interceptor;
 * its answers map to istiod's status codes. A host whose CA is not configured registers the
 * service anyway and answers FailedPrecondition saying what to configure.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";
import { createXdsGuard } from "../lib/auth/guard.ts";
import type { KeySet } from "../lib/auth/key-set.ts";
import { type CaAnswer, type CertificateAuthority, createCertificateAuthority } from "../lib/ca/authority.ts";
import type { CaBundle } from "../lib/ca/bundle.ts";
import { loadOrCreateRoot } from "../lib/ca/self-signed.ts";
import type { Config } from "../lib/config.ts";
import { IstioCertificateResponseSchema, IstioCertificateService } from "../lib/gen/istio/v1/auth/ca_pb.ts";
import { logAt, logWarn } from "../lib/log/line-log.ts";
import { createCaMetrics } from "../lib/metrics/ca-metrics.ts";
import type { Registry } from "../lib/metrics/registry.ts";
import { meshOverrides, readEffectiveMesh } from "../lib/registry/mesh/effective-mesh.ts";
import type { Store } from "../lib/store/store.ts";

/** The CA a host serves, or why it serves none (the start-up line says the same). */
export type CaService = { ca: CertificateAuthority } | { unavailable: string };

/** What a host builds its CA over. */
export interface CaSetupDeps {
  /** The durable store that keeps the self-signed root (shared by every instance, so one root). */
  store: Store;
  /** The XDS_AUTH=jwt key set (functions/auth-setup.ts). */
  keys: KeySet | undefined;
  /** Where istiod's citadel_server_* metrics go; absent where the host has no registry of its own. */
  registry?: Registry;
  now: () => number;
  log: (line: string) => void;
}

/** How a host finds its keys: its plug-in CA (read and verified, or why not), else the stored root. */
export interface CaKeySource {
  /** The plug-in CA and how the start-up line names it; absent: the self-signed root of the store. */
  plugin?: { where: string; load: () => Promise<CaBundle> };
  /** Why this store must not keep a generated root (it would change on every restart); absent: it may. */
  refuseSelfSigned?: string;
  /** Said (as a warning) when the root is kept in a store that does not outlive the process. */
  volatileStore?: string;
}

/**
 * The CA to serve, or why none is: ENABLE_CA_SERVER, XDS_AUTH=jwt's keys, then the host's key
 * source. Shared by every host so they refuse and answer alike; `plugin.load` may throw, naming
 * its setting, and the host decides whether that stops it.
 */
export async function setupCa(config: Config, deps: CaSetupDeps, source: CaKeySource): Promise<CaService> {
  const { log } = deps;
  // Info when it is the operator's choice or a development start without JWTs; warn when a setting is wrong.
  const unavailable = (reason: string, level: "info" | "warn" = "warn"): CaService => {
    logAt(log, level, `ca: IstioCertificateService is not served: ${reason}`);
    return { unavailable: `the certificate authority is not configured: ${reason}` };
  };
  const settings = config.ca;
  if (!settings.enabled) return unavailable("ENABLE_CA_SERVER=false", "info");
  const auth = config.xdsAuth;
  if (auth.mode !== "jwt" || !deps.keys)
    return unavailable(
      "it authenticates callers by their Kubernetes service-account JWTs: set XDS_AUTH=jwt with XDS_JWT_ISSUER " +
        "and a key source (XDS_JWKS_URL, XDS_JWKS_FILE, XDS_JWKS or XDS_JWT_HMAC_SECRET); tokens are checked for " +
        `TOKEN_AUDIENCES (${settings.tokenAudiences.join(",")})`,
      auth.mode === "jwt" ? "warn" : "info",
    );
  let bundle: CaBundle;
  let where: string;
  if (source.plugin) {
    bundle = await source.plugin.load();
    where = `the plug-in CA of ${source.plugin.where}`;
  } else if (source.refuseSelfSigned !== undefined) {
    return unavailable(source.refuseSelfSigned);
  } else {
    const root = await loadOrCreateRoot(deps.store, {
      trustDomain: config.registry.trustDomain,
      ttlMs: settings.selfSignedCaCertTtlMs,
      now: deps.now(),
    });
    bundle = root.bundle;
    where = `the self-signed root ${root.created ? "generated now and stored" : "from the store"}`;
    if (source.volatileStore) logWarn(log, source.volatileStore);
  }
  const guard = createXdsGuard(
    { ...auth, audiences: settings.tokenAudiences },
    { keys: deps.keys, now: deps.now },
  );
  const ca = createCertificateAuthority({
    bundle,
    authenticate: guard.authenticate,
    trustDomain: () =>
      readEffectiveMesh(deps.store, meshOverrides(config.registry)).then((m) => m.trustDomain),
    ttl: { defaultMs: settings.defaultWorkloadCertTtlMs, maxMs: settings.maxWorkloadCertTtlMs },
    now: deps.now,
    log,
    ...(deps.registry && { observer: createCaMetrics(deps.registry, bundle, deps.now) }),
  });
  log(
    `ca: IstioCertificateService/CreateCertificate signs with ${where} (${bundle.signingKey.describe}, ` +
      `${bundle.signingCert.subject}, until ${bundle.signingCert.notAfter.toISOString()}) for service-account JWTs ` +
      `from ${auth.issuer} for ${settings.tokenAudiences.join(" or ")}`,
  );
  return { ca };
}

/**
 * A getter of the CA built by `build` on its first call and kept; a rejected build (the store could
 * not be read) is not kept, so the next call tries again instead of failing for the host's life.
 */
export function lazyCa(build: () => Promise<CaService>): () => Promise<CaService> {
  let pending: Promise<CaService> | undefined;
  return () => {
    if (!pending) {
      pending = build();
      pending.catch(() => {
        pending = undefined;
      });
    }
    return pending;
  };
}

/** Where IstioCertificateService's methods are served (`/<package>.<Service>/`), for a host routing by path. */
export const caPathPrefix = `/${IstioCertificateService.typeName}/`;

const codes: Record<Exclude<CaAnswer, { ok: true }>["code"], Code> = {
  unauthenticated: Code.Unauthenticated,
  "invalid-argument": Code.InvalidArgument,
  internal: Code.Internal,
};

/**
 * Registers IstioCertificateService; requests are bounded by `readMaxBytes` (EDGEPILOT_MAX_REQUEST_BYTES).
 * `service` may be a getter, for a host (the Worker) that builds its CA on the first call.
 */
export function createCaRoutes(
  service: CaService | (() => Promise<CaService>),
  readMaxBytes: number,
): (router: ConnectRouter) => void {
  return (router) => {
    router.service(
      IstioCertificateService,
      {
        async createCertificate(req, ctx) {
          const served = typeof service === "function" ? await service() : service;
          if (!("ca" in served)) throw new ConnectError(served.unavailable, Code.FailedPrecondition);
          const impersonated = req.metadata?.ImpersonatedIdentity;
          const answer = await served.ca.createCertificate(
            {
              csr: req.csr,
              validityDuration: req.validityDuration,
              ...(typeof impersonated === "string" && { impersonatedIdentity: impersonated }),
            },
            ctx.requestHeader.get("authorization"),
          );
          if (!answer.ok) throw new ConnectError(answer.message, codes[answer.code]);
          return create(IstioCertificateResponseSchema, { certChain: answer.certChain });
        },
      },
      { readMaxBytes },
    );
  };
}
