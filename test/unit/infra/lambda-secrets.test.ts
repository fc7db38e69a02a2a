/**
 * infra/aws/lambda-secrets.ts against a real HTTP server answering as the AWS Parameters and
 * Secrets extension does (test/support/secrets-extension.ts: GET /secretsmanager/get?secretId=...,
 * the session token in X-Aws-Parameters-Secrets-Token, GetSecretValue's JSON): each `_SECRET_ARN` fills its variable,
 * and every failure names the variable.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resolveSecretEnv } from "../../../infra/aws/lambda-secrets.ts";
import { type SecretsExtension, startSecretsExtension } from "../../support/secrets-extension.ts";

const pem =
  "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----\n";
const arn = (name: string) => `arn:aws:secretsmanager:eu-west-1:123456789012:secret:${name}-AbCdEf`;
const secrets: Record<string, unknown> = {
  [arn("IngestToken")]: { ARN: arn("IngestToken"), SecretString: "ingest-token-0123456789abcdef" },
  [arn("XdsToken")]: { ARN: arn("XdsToken"), SecretString: "xds-token-0123456789abcdef" },
  [arn("Binary")]: { ARN: arn("Binary"), SecretBinary: "AAEC" },
  [arn("CaKey")]: { ARN: arn("CaKey"), SecretString: pem },
};

describe("lambda-secrets: secrets into the environment at cold start", () => {
  let extension: SecretsExtension;
  let port = 0;
  let asked: string[] = [];
  beforeAll(async () => {
    extension = await startSecretsExtension(secrets, "session");
    ({ port, asked } = extension);
  });
  afterAll(() => extension.close());

  const env = (over: Record<string, string>): Record<string, string | undefined> => ({
    AWS_SESSION_TOKEN: "session",
    PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: String(port),
    ...over,
  });

  it("fills EDGEPILOT_TOKEN and EDGEPILOT_XDS_TOKEN from their ARNs, and nothing else", async () => {
    const e: Record<string, string | undefined> = env({
      EDGEPILOT_TOKEN_SECRET_ARN: arn("IngestToken"),
      EDGEPILOT_XDS_TOKEN_SECRET_ARN: arn("XdsToken"),
      OTHER_SECRET_ARN: arn("IngestToken"),
    });
    expect(await resolveSecretEnv(e)).toEqual(["EDGEPILOT_TOKEN", "EDGEPILOT_XDS_TOKEN"]);
    expect(e.EDGEPILOT_TOKEN).toBe("ingest-token-0123456789abcdef");
    expect(e.EDGEPILOT_XDS_TOKEN).toBe("xds-token-0123456789abcdef");
    expect(e).not.toHaveProperty("OTHER");
  });

  it("fills the plug-in CA's variables (CA_CERT_PEM, CA_KEY_PEM, CERT_CHAIN_PEM, ROOT_CERT_PEM), PEM as it is", async () => {
    const e: Record<string, string | undefined> = env({
      CA_CERT_PEM_SECRET_ARN: arn("XdsToken"),
      CA_KEY_PEM_SECRET_ARN: arn("CaKey"),
      CERT_CHAIN_PEM_SECRET_ARN: arn("IngestToken"),
      ROOT_CERT_PEM_SECRET_ARN: arn("IngestToken"),
    });
    expect(await resolveSecretEnv(e)).toEqual([
      "CA_CERT_PEM",
      "CA_KEY_PEM",
      "CERT_CHAIN_PEM",
      "ROOT_CERT_PEM",
    ]);
    expect(e.CA_KEY_PEM).toBe(pem);
    expect(e.CA_CERT_PEM).toBe("xds-token-0123456789abcdef");
  });

  it("asks nothing when no ARN is set, or the variable is set already", async () => {
    const before = asked.length;
    expect(await resolveSecretEnv(env({}))).toEqual([]);
    const e = env({ EDGEPILOT_TOKEN: "set", EDGEPILOT_TOKEN_SECRET_ARN: arn("IngestToken") });
    expect(await resolveSecretEnv(e)).toEqual([]);
    expect(e.EDGEPILOT_TOKEN).toBe("set");
    expect(asked.length).toBe(before);
  });

  const failures: { name: string; env: Record<string, string>; error: RegExp }[] = [
    {
      name: "a secret the role may not read (the extension's 4xx)",
      env: { EDGEPILOT_TOKEN_SECRET_ARN: arn("Missing") },
      error:
        /^EDGEPILOT_TOKEN_SECRET_ARN: reading the secret failed with HTTP 400 .*ResourceNotFoundException/,
    },
    {
      name: "a wrong session token",
      env: { EDGEPILOT_XDS_TOKEN_SECRET_ARN: arn("XdsToken"), AWS_SESSION_TOKEN: "other" },
      error: /^EDGEPILOT_XDS_TOKEN_SECRET_ARN: reading the secret failed with HTTP 401/,
    },
    {
      name: "a binary secret",
      env: { EDGEPILOT_TOKEN_SECRET_ARN: arn("Binary") },
      error: /^EDGEPILOT_TOKEN_SECRET_ARN: the secret holds no SecretString/,
    },
    {
      name: "no extension listening",
      env: { EDGEPILOT_TOKEN_SECRET_ARN: arn("IngestToken"), PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: "1" },
      error: /^EDGEPILOT_TOKEN_SECRET_ARN: the Parameters and Secrets extension on port 1 did not answer/,
    },
  ];
  for (const f of failures)
    it(`fails naming the variable: ${f.name}`, async () => {
      const e: Record<string, string | undefined> = env(f.env);
      await expect(resolveSecretEnv(e)).rejects.toThrow(f.error);
      expect(e.EDGEPILOT_TOKEN).toBeUndefined();
    });
});
