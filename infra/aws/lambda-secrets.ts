/**
 * Secrets into the environment of a deployed function, before edgepilot reads it: for each
 * `<NAME>_SECRET_ARN` the stack set (EDGEPILOT_TOKEN, EDGEPILOT_XDS_TOKEN, and the plug-in CA's
 * CA_CERT_PEM, CA_KEY_PEM, CERT_CHAIN_PEM, ROOT_CERT_PEM), the secret's value
 * becomes `<NAME>`, read once at cold start from the AWS Parameters and Secrets Lambda extension
 * (a layer the stack adds: `GET localhost:2773/secretsmanager/get`, authenticated by the
 * invocation's session token). The value never sits in the function's configuration, where anyone
 * allowed lambda:GetFunctionConfiguration would read it. A failure names the variable and throws,
 * so the container's init fails and Lambda reports it.
 */
import { pluginCaVariables } from "../../lib/ca/config.ts";

/** The variables a secret may fill (nothing else is taken from a `_SECRET_ARN`). */
export const secretVariables = [
  "EDGEPILOT_TOKEN",
  "EDGEPILOT_XDS_TOKEN",
  ...Object.values(pluginCaVariables),
] as const;

/** The suffix naming a secret's ARN: EDGEPILOT_TOKEN_SECRET_ARN fills EDGEPILOT_TOKEN. */
export const secretArnSuffix = "_SECRET_ARN";

/** The extension's default port (PARAMETERS_SECRETS_EXTENSION_HTTP_PORT). */
const defaultPort = "2773";

/**
 * Sets each variable of `secretVariables` whose `_SECRET_ARN` is set in `env` (and that is not set
 * itself) from the extension; returns the names it set.
 */
export async function resolveSecretEnv(
  env: Record<string, string | undefined>,
  fetchSecret: typeof fetch = fetch,
): Promise<string[]> {
  const set: string[] = [];
  for (const name of secretVariables) {
    const arnVariable = `${name}${secretArnSuffix}`;
    const arn = env[arnVariable];
    if (!arn || env[name]) continue;
    const port = env.PARAMETERS_SECRETS_EXTENSION_HTTP_PORT || defaultPort;
    const url = `http://localhost:${port}/secretsmanager/get?secretId=${encodeURIComponent(arn)}`;
    let res: Response;
    try {
      res = await fetchSecret(url, {
        headers: { "X-Aws-Parameters-Secrets-Token": env.AWS_SESSION_TOKEN ?? "" },
      });
    } catch (err) {
      throw new Error(
        `${arnVariable}: the Parameters and Secrets extension on port ${port} did not answer (${err instanceof Error ? err.message : String(err)}): is its layer on the function?`,
      );
    }
    const body = await res.text();
    if (!res.ok)
      throw new Error(
        `${arnVariable}: reading the secret failed with HTTP ${res.status} (the role needs secretsmanager:GetSecretValue on it): ${body.slice(0, 200)}`,
      );
    let value: unknown;
    try {
      value = (JSON.parse(body) as { SecretString?: unknown }).SecretString;
    } catch {
      value = undefined;
    }
    if (typeof value !== "string" || value === "")
      throw new Error(
        `${arnVariable}: the secret holds no SecretString (store the token or PEM as plain text)`,
      );
    env[name] = value;
    set.push(name);
  }
  return set;
}
