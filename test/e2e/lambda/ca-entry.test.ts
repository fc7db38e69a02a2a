/**
 * The xds function as infra/aws deploys it (infra/aws/entries/xds.ts, module-load code included)
 * with a plug-in CA in Secrets Manager: the stack's CA_CERT_PEM_SECRET_ARN, CA_KEY_PEM_SECRET_ARN,
 * CERT_CHAIN_PEM_SECRET_ARN and ROOT_CERT_PEM_SECRET_ARN are read at cold start through a stand-in
 * of the Parameters and Secrets extension, and CreateCertificate on the function's URL signs under
 * that CA (dynalite as DynamoDB, which then holds no root).
 */
import "reflect-metadata";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { X509Certificate } from "@peculiar/x509";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IstioCertificateService } from "../../../lib/gen/istio/v1/auth/ca_pb.ts";
import { createDynamoStore } from "../../../lib/store/dynamodb.ts";
import { keys as storeKeys } from "../../../lib/store/keys.ts";
import { localCredentials, type RunningDynalite, startDynalite } from "../../support/dynalite.ts";
import { type LambdaHarness, startLambdaHarness } from "../../support/lambda-harness.ts";
import { type SecretsExtension, startSecretsExtension } from "../../support/secrets-extension.ts";
import { claims, issuer, jwksOf, makeKeys, sign } from "../../unit/auth/tokens.ts";
import { csrPem, pluginCa, productpage } from "../../unit/ca/builders.ts";
import { checkIssuedChain } from "../ca/chain.ts";

const arn = (name: string) => `arn:aws:secretsmanager:us-east-1:123456789012:secret:edgepilot/${name}-Xy12Zq`;

describe("the deployed xds entry with a plug-in CA in Secrets Manager", () => {
  let dynalite: RunningDynalite;
  let extension: SecretsExtension;
  let harness: LambdaHarness;
  let ca: Awaited<ReturnType<typeof pluginCa>>;
  let token: string;
  const saved = { ...process.env };
  beforeAll(async () => {
    const keys = await makeKeys();
    const t = Math.floor(Date.now() / 1000);
    token = await sign(keys, "ES256", claims({ aud: ["istio-ca"], iat: t, nbf: t - 5, exp: t + 600 }));
    ca = await pluginCa({ from: Date.now() - 3_600_000 });
    const files = {
      "ca-cert": ca.files["ca-cert.pem"],
      "ca-key": ca.files["ca-key.pem"],
      "cert-chain": ca.files["cert-chain.pem"],
      "root-cert": ca.files["root-cert.pem"],
    };
    extension = await startSecretsExtension(
      Object.fromEntries(
        Object.entries(files).map(([n, pem]) => [arn(n), { ARN: arn(n), SecretString: pem }]),
      ),
      "session-token",
    );
    dynalite = await startDynalite();
    Object.assign(process.env, {
      AWS_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: localCredentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: localCredentials.secretAccessKey,
      AWS_SESSION_TOKEN: "session-token",
      PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: String(extension.port),
      DYNAMODB_ENDPOINT: dynalite.endpoint,
      DYNAMODB_TABLE: dynalite.table,
      EDGEPILOT_STORE: "dynamodb",
      XDS_AUTH: "jwt",
      XDS_JWT_ISSUER: issuer,
      XDS_JWT_AUDIENCE: "edgepilot",
      XDS_JWKS: await jwksOf(keys),
      LOG_LEVEL: "warn",
      CA_CERT_PEM_SECRET_ARN: arn("ca-cert"),
      CA_KEY_PEM_SECRET_ARN: arn("ca-key"),
      CERT_CHAIN_PEM_SECRET_ARN: arn("cert-chain"),
      ROOT_CERT_PEM_SECRET_ARN: arn("root-cert"),
    });
    // One container: the entry's imports (the secrets' init, the handler) load once per module graph.
    const entry = new URL("../../../infra/aws/entries/xds.ts", import.meta.url).pathname;
    harness = await startLambdaHarness([
      {
        name: "xds",
        url: true,
        timeoutMs: 10_000,
        load: async () => (await import(/* @vite-ignore */ entry)).handler,
      },
    ]);
  });
  afterAll(async () => {
    await harness?.close();
    await extension?.close();
    await Promise.race([dynalite?.stop(), new Promise((r) => setTimeout(r, 200))]);
    process.env = saved;
  });

  it("reads the four secrets at cold start and signs under the plug-in CA", async () => {
    const client = createClient(
      IstioCertificateService,
      createConnectTransport({ baseUrl: harness.url("xds"), httpVersion: "1.1" }),
    );
    const res = await client.createCertificate(
      { csr: await csrPem(), validityDuration: 3600n },
      { headers: { authorization: `Bearer ${token}` } },
    );
    const certs = await checkIssuedChain({ chain: res.certChain }, productpage);
    const pem = (text: string) => new X509Certificate(text).toString("pem");
    expect(certs.slice(1).map((c) => c.toString("pem"))).toEqual([
      pem(ca.intermediatePem),
      pem(ca.rootPem),
      pem(ca.rootPem),
    ]);
    expect([...extension.asked].sort()).toEqual(
      ["ca-cert", "ca-key", "cert-chain", "root-cert"].map(arn).sort(),
    );
    const store = createDynamoStore({ client: dynalite.client(), table: dynalite.table });
    expect(await store.get(storeKeys.caRoot())).toBeUndefined();
  });
});
