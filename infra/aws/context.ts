/**
 * The CDK app's settings from its context (`cdk deploy -c xdsAuth=jwt -c xdsJwtIssuer=...`, or
 * cdk.json's "context"): how proxies authenticate to the xDS Function URL, and the Secrets Manager
 * secrets holding a plug-in CA the xDS function signs with. Parsed once, purely,
 * with every error naming the context key to set, so a bad deploy stops at synth instead of a
 * function answering 500 on its first request.
 */
import { parseXdsAuth } from "../../lib/auth/config.ts";
import type { PluginCaVariable } from "../../lib/ca/config.ts";

/**
 * How the xDS function authenticates proxies. A Function URL cannot ask proxies to sign SigV4
 * (Envoy, gRPC and the agent send a bearer token), so the URL is open and the app checks:
 * `jwt` (Kubernetes service-account tokens, as istiod; no shared secret) or `token` (one bearer
 * token in a Secrets Manager secret the stack generates).
 */
export type XdsAuthSettings =
  | { mode: "token" }
  | { mode: "jwt"; issuer: string; audience: string; jwksUrl: string };

/** What the stack is built from; every field has its context key. */
export interface StackSettings {
  xdsAuth: XdsAuthSettings;
  /** `logRetentionDays`: days CloudWatch keeps each function's logs (default 30). */
  logRetentionDays: number;
  /**
   * The plug-in CA: each variable's secret (a complete ARN), read by the xDS function at cold start;
   * absent: the self-signed root kept in the table.
   */
  pluginCaSecretArns?: Record<PluginCaVariable, string>;
}

/** The context keys this app reads, for messages and docs/tasks/aws.md. */
export const contextKeys = {
  xdsAuth: "xdsAuth",
  issuer: "xdsJwtIssuer",
  audience: "xdsJwtAudience",
  jwksUrl: "xdsJwksUrl",
  logRetentionDays: "logRetentionDays",
} as const;

/** The context key of each plug-in CA file's secret ARN (all four or none). */
export const pluginCaContextKeys: Readonly<Record<PluginCaVariable, string>> = {
  CA_CERT_PEM: "caCertSecretArn",
  CA_KEY_PEM: "caKeySecretArn",
  CERT_CHAIN_PEM: "certChainSecretArn",
  ROOT_CERT_PEM: "rootCertSecretArn",
};

/**
 * A complete secret ARN (with the six characters Secrets Manager appends to the name): IAM grants
 * GetSecretValue on exactly that ARN, with no wildcard for the suffix.
 */
const completeSecretArn =
  /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+-[A-Za-z0-9]{6}$/;

/** The retention periods CloudWatch Logs accepts (days). */
const retentionDays = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
];

export type SettingsResult = { ok: true; value: StackSettings } | { ok: false; errors: string[] };

/** Reads the settings through `get` (the app's `node.tryGetContext`); errors name the key. */
export function parseStackSettings(get: (key: string) => unknown): SettingsResult {
  const errors: string[] = [];
  const str = (key: string): string => {
    const v = get(key);
    if (v === undefined || v === null) return "";
    if (typeof v !== "string") {
      errors.push(`context ${key}: expected a string, got ${JSON.stringify(v)}`);
      return "";
    }
    return v.trim();
  };
  const mode = str(contextKeys.xdsAuth) || "jwt";
  let xdsAuth: XdsAuthSettings = { mode: "token" };
  if (mode === "jwt") {
    const issuer = str(contextKeys.issuer);
    const audience = str(contextKeys.audience) || "edgepilot";
    const jwksUrl = str(contextKeys.jwksUrl);
    // The function checks the same variables at start-up: check them here with the same parser,
    // naming the context key rather than the variable.
    const envErrors: string[] = [];
    parseXdsAuth(
      { XDS_AUTH: "jwt", XDS_JWT_ISSUER: issuer, XDS_JWT_AUDIENCE: audience, XDS_JWKS_URL: jwksUrl },
      { host: "0.0.0.0", hostFromToken: false, worker: true },
      envErrors,
    );
    if (jwksUrl === "")
      envErrors.push("XDS_JWKS_URL: XDS_AUTH=jwt on Lambda needs the issuer's JWKS URL (its jwks_uri)");
    const names: Record<string, string> = {
      XDS_JWT_ISSUER: contextKeys.issuer,
      XDS_JWT_AUDIENCE: contextKeys.audience,
      XDS_JWKS_URL: contextKeys.jwksUrl,
    };
    for (const e of envErrors) {
      const variable = Object.keys(names).find((n) => e.startsWith(n));
      if (variable) errors.push(`context ${names[variable]} (${e})`);
    }
    xdsAuth = { mode: "jwt", issuer, audience, jwksUrl };
  } else if (mode !== "token") {
    errors.push(`context ${contextKeys.xdsAuth}=${mode}: not one of jwt, token`);
  }
  const rawDays = get(contextKeys.logRetentionDays) ?? 30;
  const days = typeof rawDays === "string" ? Number(rawDays) : rawDays;
  if (typeof days !== "number" || !retentionDays.includes(days))
    errors.push(
      `context ${contextKeys.logRetentionDays}=${JSON.stringify(rawDays)}: not a CloudWatch Logs retention (one of ${retentionDays.join(", ")} days)`,
    );
  const pluginCaSecretArns = parsePluginCa(str, xdsAuth.mode, errors);
  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    value: { xdsAuth, logRetentionDays: days as number, ...(pluginCaSecretArns && { pluginCaSecretArns }) },
  };
}

/** The plug-in CA's four ARNs, or none; each problem names its context key. */
function parsePluginCa(
  str: (key: string) => string,
  mode: XdsAuthSettings["mode"],
  errors: string[],
): Record<PluginCaVariable, string> | undefined {
  const entries = Object.entries(pluginCaContextKeys) as [PluginCaVariable, string][];
  const given = entries.map(([variable, key]) => [variable, key, str(key)] as const);
  if (given.every(([, , arn]) => arn === "")) return undefined;
  const all = entries.map(([, key]) => key).join(", ");
  const arns = {} as Record<PluginCaVariable, string>;
  for (const [variable, key, arn] of given) {
    if (arn === "") errors.push(`context ${key}: not set: a plug-in CA needs all of ${all}`);
    else if (!completeSecretArn.test(arn))
      errors.push(
        `context ${key}=${arn}: not a complete Secrets Manager secret ARN ` +
          "(arn:aws:secretsmanager:<region>:<account>:secret:<name>-<6 characters>, as `aws secretsmanager describe-secret` shows it)",
      );
    arns[variable] = arn;
  }
  if (mode !== "jwt")
    errors.push(
      `context ${all}: the CA authenticates its callers by service-account JWTs, so it is served only with ${contextKeys.xdsAuth}=jwt`,
    );
  return arns;
}
