/**
 * The certificate authority of the Node runtime: the plug-in CA read from ROOT_CA_DIR (Istio's
 * layout), or the self-signed root kept in the store; callers authenticated with the XDS_AUTH=jwt
 * keys and issuer for TOKEN_AUDIENCES; istiod's metrics on the runtime's registry. What cannot be
 * served is said once at start-up, naming what to configure; a bad ROOT_CA_DIR stops start-up.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { isLoopbackHost } from "../../lib/auth/config.ts";
import { createXdsGuard } from "../../lib/auth/guard.ts";
import type { KeySet } from "../../lib/auth/key-set.ts";
import { createCertificateAuthority } from "../../lib/ca/authority.ts";
import { type CaBundle, loadPluginCa, type PluginCaFiles, pluginCaFileNames } from "../../lib/ca/bundle.ts";
import { loadOrCreateRoot } from "../../lib/ca/self-signed.ts";
import type { Config } from "../../lib/config.ts";
import { logAt, logWarn } from "../../lib/log/line-log.ts";
import { createCaMetrics } from "../../lib/metrics/ca-metrics.ts";
import type { Registry } from "../../lib/metrics/registry.ts";
import type { Store } from "../../lib/store/store.ts";
import type { CaService } from "../ca.ts";

/** What the CA is built over. */
export interface NodeCaDeps {
  store: Store;
  /** The XDS_AUTH=jwt key set (functions/auth-setup.ts). */
  keys: KeySet | undefined;
  registry: Registry;
  now: () => number;
  log: (line: string) => void;
}

/** The CA to serve, or why none is; throws (naming ROOT_CA_DIR) when the plug-in CA is unusable. */
export async function setupNodeCa(config: Config, deps: NodeCaDeps): Promise<CaService> {
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
  if (settings.rootCaDir !== undefined) {
    bundle = await readPluginCa(settings.rootCaDir, deps.now());
    where = `the plug-in CA of ROOT_CA_DIR=${settings.rootCaDir}`;
  } else if (config.store.kind === "memory" && !isLoopbackHost(config.host)) {
    return unavailable(
      `no plug-in CA and EDGEPILOT_STORE=memory on HOST=${config.host}: a self-signed root kept in memory would ` +
        "change on every restart and break every workload's trust. Set ROOT_CA_DIR to a directory holding " +
        "ca-cert.pem, ca-key.pem, cert-chain.pem and root-cert.pem, or use a durable store (EDGEPILOT_STORE=file or dynamodb) " +
        "to keep a generated root, or ENABLE_CA_SERVER=false",
    );
  } else {
    const root = await loadOrCreateRoot(deps.store, {
      trustDomain: config.registry.trustDomain,
      ttlMs: settings.selfSignedCaCertTtlMs,
      now: deps.now(),
    });
    bundle = root.bundle;
    where = `the self-signed root ${root.created ? "generated now and stored" : "from the store"}`;
    if (config.store.kind === "memory")
      logWarn(
        log,
        "ca: the self-signed root lives in the memory store: a restart generates a new one (set ROOT_CA_DIR or a durable store)",
      );
  }
  const guard = createXdsGuard(
    { ...auth, audiences: settings.tokenAudiences },
    { keys: deps.keys, now: deps.now },
  );
  const ca = createCertificateAuthority({
    bundle,
    authenticate: guard.authenticate,
    trustDomain: config.registry.trustDomain,
    ttl: { defaultMs: settings.defaultWorkloadCertTtlMs, maxMs: settings.maxWorkloadCertTtlMs },
    now: deps.now,
    log,
    observer: createCaMetrics(deps.registry, bundle, deps.now),
  });
  log(
    `ca: IstioCertificateService/CreateCertificate signs with ${where} (${bundle.signingKey.describe}, ` +
      `${bundle.signingCert.subject}, until ${bundle.signingCert.notAfter.toISOString()}) for service-account JWTs ` +
      `from ${auth.issuer} for ${settings.tokenAudiences.join(" or ")}`,
  );
  return { ca };
}

/** Reads Istio's plug-in files from `dir` and verifies them; every failure names ROOT_CA_DIR and the file. */
async function readPluginCa(dir: string, now: number): Promise<CaBundle> {
  const files = {} as PluginCaFiles;
  for (const name of pluginCaFileNames)
    files[name] = await readFile(join(dir, name), "utf8").catch((e: unknown) => {
      throw new Error(
        `ROOT_CA_DIR=${dir}: cannot read ${name} (${e instanceof Error ? e.message : e}); a plug-in CA holds ${pluginCaFileNames.join(", ")}`,
      );
    });
  const loaded = await loadPluginCa(files, now);
  if (!loaded.ok) throw new Error(`ROOT_CA_DIR=${dir}: ${loaded.error}`);
  return loaded.bundle;
}
