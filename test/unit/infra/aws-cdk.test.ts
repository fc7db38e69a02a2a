/**
 * infra/aws synthesizes offline into the template the AWS host needs, and grants exactly what the
 * code calls: the table (keys, on-demand, PITR, TTL, retained), three arm64 Node 24 functions and
 * their environment, the two Function URLs, the one-minute schedule, and every IAM statement of
 * every role, each asserted whole. The stack is synthesized once per XDS_AUTH mode; only the first
 * bundles the real entries (the local esbuild through `npx --no-install esbuild`, no Docker: 11-19 s
 * for this file on a loaded 2-core machine, almost all of it bundling), the second differs in its
 * settings only and skips bundling (aws:cdk:bundling-stacks). The CLI test (`npx cdk synth`, about
 * 15-27 s here) runs the pinned CLI.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { App } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { parseLambdaEnv } from "../../../functions/lambda/env.ts";
import { parseStackSettings, type StackSettings } from "../../../infra/aws/context.ts";
import { EdgepilotStack } from "../../../infra/aws/edgepilot-stack.ts";
import { tableActions } from "../../../lib/store/dynamodb-table.ts";

const root = fileURLToPath(new URL("../../../", import.meta.url));

type Json = Record<string, unknown>;
interface Resource {
  Type: string;
  Properties?: Json;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
}

function synth(settings: StackSettings, bundle: boolean) {
  const app = new App({ context: { "aws:cdk:bundling-stacks": bundle ? ["**"] : [] } });
  const stack = new EdgepilotStack(app, "Edgepilot", { settings, projectRoot: root });
  const template = Template.fromStack(stack).toJSON() as {
    Resources: Record<string, Resource>;
    Outputs: Record<string, { Value: unknown }>;
  };
  return { resources: template.Resources, outputs: template.Outputs, outdir: app.outdir };
}

/** The logical id of the one resource of `type` whose id starts with `prefix`. */
function idOf(resources: Record<string, Resource>, type: string, prefix: string): string {
  const ids = Object.keys(resources).filter((id) => resources[id]?.Type === type && id.startsWith(prefix));
  expect(ids, `${type} ${prefix}`).toHaveLength(1);
  return ids[0] as string;
}
const ofType = (resources: Record<string, Resource>, type: string) =>
  Object.entries(resources).filter(([, r]) => r.Type === type);
const arn = (id: string) => ({ "Fn::GetAtt": [id, "Arn"] });
const ref = (id: string) => ({ Ref: id });

/** Every statement of every inline policy, by the role it is attached to. */
function statementsByRole(resources: Record<string, Resource>): Map<string, Json[]> {
  const out = new Map<string, Json[]>();
  for (const [, p] of ofType(resources, "AWS::IAM::Policy")) {
    const props = p.Properties as { Roles: { Ref: string }[]; PolicyDocument: { Statement: Json[] } };
    for (const role of props.Roles)
      out.set(role.Ref, [...(out.get(role.Ref) ?? []), ...props.PolicyDocument.Statement]);
  }
  return out;
}

const jwt: StackSettings = {
  xdsAuth: {
    mode: "jwt",
    issuer: "https://oidc.eks.eu-west-1.amazonaws.com/id/ABC",
    audience: "edgepilot",
    jwksUrl: "https://oidc.eks.eu-west-1.amazonaws.com/id/ABC/keys",
  },
  logRetentionDays: 30,
};
const token: StackSettings = { xdsAuth: { mode: "token" }, logRetentionDays: 14 };
const secretArn = (name: string) =>
  `arn:aws:secretsmanager:eu-west-1:123456789012:secret:edgepilot/${name}-AbC123`;
/** jwt with a plug-in CA: the operator's four secrets. */
const pluginCa: StackSettings = {
  ...jwt,
  pluginCaSecretArns: {
    CA_CERT_PEM: secretArn("ca-cert"),
    CA_KEY_PEM: secretArn("ca-key"),
    CERT_CHAIN_PEM: secretArn("cert-chain"),
    ROOT_CERT_PEM: secretArn("root-cert"),
  },
};

describe("infra/aws (CDK synth)", () => {
  let t: Record<string, Resource>;
  let tk: Record<string, Resource>;
  let tca: Record<string, Resource>;
  let outdir = "";
  let outputs: Record<string, { Value: unknown }> = {};
  let tokenOutputs: Record<string, { Value: unknown }> = {};
  beforeAll(() => {
    ({ resources: t, outdir, outputs } = synth(jwt, true));
    ({ resources: tk, outputs: tokenOutputs } = synth(token, false));
    ({ resources: tca } = synth(pluginCa, false));
  }, 60_000);

  it("outputs what docs/tasks/aws.md's deploy steps use: the two URLs, the table and the secrets", () => {
    const url = (fn: string) => ({
      "Fn::GetAtt": [idOf(t, "AWS::Lambda::Url", `${fn}FunctionUrl`), "FunctionUrl"],
    });
    expect(outputs.IngestUrl?.Value).toEqual(url("Ingest"));
    expect(outputs.XdsUrl?.Value).toEqual(url("Xds"));
    expect(outputs.TableName?.Value).toEqual(ref(idOf(t, "AWS::DynamoDB::Table", "Table")));
    expect(outputs.IngestTokenSecret?.Value).toEqual(
      ref(idOf(t, "AWS::SecretsManager::Secret", "IngestToken")),
    );
    expect(outputs).not.toHaveProperty("XdsTokenSecret");
    expect(tokenOutputs.XdsTokenSecret?.Value).toEqual(
      ref(idOf(tk, "AWS::SecretsManager::Secret", "XdsToken")),
    );
  });

  it("bundles each entry offline into one Node ESM file exporting handler", () => {
    for (const fn of ["Ingest", "Debounce", "Xds"]) {
      const code = t[idOf(t, "AWS::Lambda::Function", fn)]?.Properties?.Code as { S3Key: string };
      const file = join(outdir, `asset.${code.S3Key.replace(/\.zip$/, "")}`, "index.mjs");
      expect(existsSync(file), file).toBe(true);
      const bundle = readFileSync(file, "utf8");
      // (booleans: a failure must not print a megabyte of minified code)
      expect(bundle.startsWith("import { createRequire as edgepilotRequire }"), fn).toBe(true);
      // esbuild ends a bundle with the license comments of what it bundled (re2js), after the code.
      const body = bundle.replace(/\/\*! Bundled license information:[\s\S]*\*\/\s*$/, "");
      expect(/export\s*\{[^}]*\bas handler\b[^}]*\};?\s*$/.test(body), `${fn} exports handler`).toBe(true);
      // The SDK is in the bundle, not left to the runtime's copy.
      expect(/from\s*"@aws-sdk\//.test(bundle), `${fn} imports @aws-sdk`).toBe(false);
      expect(bundle.includes('"DynamoDB_20120810"'), `${fn} holds the DynamoDB client`).toBe(true);
      // Ingest and xds fill their secrets in from the extension first (infra/aws/entries/).
      expect(bundle.includes("X-Aws-Parameters-Secrets-Token"), `${fn} reads secrets`).toBe(
        fn !== "Debounce",
      );
    }
  });

  it("the table: pk/sk strings, on-demand, PITR, TTL on `ttl`, retained and deletion-protected", () => {
    const table = t[idOf(t, "AWS::DynamoDB::Table", "Table")] as Resource;
    expect(table.Properties).toEqual({
      AttributeDefinitions: [
        { AttributeName: "pk", AttributeType: "S" },
        { AttributeName: "sk", AttributeType: "S" },
      ],
      KeySchema: [
        { AttributeName: "pk", KeyType: "HASH" },
        { AttributeName: "sk", KeyType: "RANGE" },
      ],
      BillingMode: "PAY_PER_REQUEST",
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      TimeToLiveSpecification: { AttributeName: "ttl", Enabled: true },
      DeletionProtectionEnabled: true,
    });
    expect(table.DeletionPolicy).toBe("Retain");
    expect(table.UpdateReplacePolicy).toBe("Retain");
  });

  it("three functions, Node 24 on arm64, each with the store's environment and its own", () => {
    const tableId = idOf(t, "AWS::DynamoDB::Table", "Table");
    expect(ofType(t, "AWS::Lambda::Function")).toHaveLength(3);
    const env = (r: Record<string, Resource>, prefix: string) => {
      const fn = r[idOf(r, "AWS::Lambda::Function", prefix)] as Resource;
      expect(fn.Properties).toMatchObject({
        Runtime: "nodejs24.x",
        Architectures: ["arm64"],
        Handler: "index.handler",
      });
      const vars = (fn.Properties?.Environment as { Variables: Json }).Variables;
      expect(vars).toMatchObject({ EDGEPILOT_STORE: "dynamodb", DYNAMODB_TABLE: ref(tableId) });
      // No secret value is ever a plain environment variable.
      for (const name of ["EDGEPILOT_TOKEN", "EDGEPILOT_XDS_TOKEN", "XDS_JWT_HMAC_SECRET"])
        expect(vars).not.toHaveProperty(name);
      return vars;
    };
    const ingestToken = idOf(t, "AWS::SecretsManager::Secret", "IngestToken");
    expect(env(t, "Ingest")).toMatchObject({
      EDGEPILOT_DEBOUNCE_FUNCTION: ref(idOf(t, "AWS::Lambda::Function", "Debounce")),
      EDGEPILOT_TOKEN_SECRET_ARN: ref(ingestToken),
      PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: "2773",
    });
    // Ingest and debounce serve no xDS read: XDS_AUTH is chosen (every Lambda must) as none.
    expect(Object.keys(env(t, "Debounce")).sort()).toEqual([
      "DYNAMODB_TABLE",
      "EDGEPILOT_STORE",
      "LOG_FORMAT",
      "XDS_AUTH",
    ]);
    expect(env(t, "Debounce").XDS_AUTH).toBe("none");
    expect(env(t, "Ingest").XDS_AUTH).toBe("none");
    expect(env(t, "Xds")).toMatchObject({
      XDS_AUTH: "jwt",
      XDS_JWT_ISSUER: jwt.xdsAuth.mode === "jwt" ? jwt.xdsAuth.issuer : "",
      XDS_JWT_AUDIENCE: "edgepilot",
      XDS_JWKS_URL: "https://oidc.eks.eu-west-1.amazonaws.com/id/ABC/keys",
    });
    expect(env(t, "Xds")).not.toHaveProperty("EDGEPILOT_XDS_TOKEN_SECRET_ARN");
    // XDS_AUTH=token: a generated secret the xds function reads, and no JWT settings.
    const xdsToken = env(tk, "Xds");
    expect(xdsToken).toMatchObject({
      XDS_AUTH: "token",
      EDGEPILOT_XDS_TOKEN_SECRET_ARN: ref(idOf(tk, "AWS::SecretsManager::Secret", "XdsToken")),
    });
    expect(xdsToken).not.toHaveProperty("XDS_JWT_ISSUER");
    expect(ofType(t, "AWS::SecretsManager::Secret")).toHaveLength(1);
    expect(ofType(tk, "AWS::SecretsManager::Secret")).toHaveLength(2);
    // No plug-in CA: nothing of it, and no extension on xds (the CA's root is in the table).
    for (const v of ["CA_CERT_PEM", "CA_KEY_PEM", "CERT_CHAIN_PEM", "ROOT_CERT_PEM"])
      expect(env(t, "Xds")).not.toHaveProperty(`${v}_SECRET_ARN`);
    expect(env(t, "Xds")).not.toHaveProperty("PARAMETERS_SECRETS_EXTENSION_HTTP_PORT");
  });

  it("a plug-in CA: the xds function gets the four secrets' ARNs and the extension, never their values", () => {
    const fn = tca[idOf(tca, "AWS::Lambda::Function", "Xds")] as Resource;
    const vars = (fn.Properties?.Environment as { Variables: Json }).Variables;
    expect(vars).toMatchObject({
      XDS_AUTH: "jwt",
      CA_CERT_PEM_SECRET_ARN: secretArn("ca-cert"),
      CA_KEY_PEM_SECRET_ARN: secretArn("ca-key"),
      CERT_CHAIN_PEM_SECRET_ARN: secretArn("cert-chain"),
      ROOT_CERT_PEM_SECRET_ARN: secretArn("root-cert"),
      PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: "2773",
    });
    for (const v of ["CA_CERT_PEM", "CA_KEY_PEM", "CERT_CHAIN_PEM", "ROOT_CERT_PEM"])
      expect(vars).not.toHaveProperty(v);
    // The Parameters and Secrets extension's layer, as ingest has it for its token.
    const ingestLayers = tca[idOf(tca, "AWS::Lambda::Function", "Ingest")]?.Properties?.Layers;
    expect(fn.Properties?.Layers).toEqual(ingestLayers);
    expect(JSON.stringify(ingestLayers)).toMatch(/Paramsandsecrets/);
    expect(t[idOf(t, "AWS::Lambda::Function", "Xds")]?.Properties?.Layers).toBeUndefined();
    // The secrets are the operator's: the stack makes none for them.
    expect(ofType(tca, "AWS::SecretsManager::Secret")).toHaveLength(1);
    for (const other of ["Ingest", "Debounce"]) {
      const otherVars = (
        tca[idOf(tca, "AWS::Lambda::Function", other)]?.Properties?.Environment as { Variables: Json }
      ).Variables;
      expect(Object.keys(otherVars).some((k) => k.startsWith("CA_"))).toBe(false);
    }
  });

  it("each function's environment, as deployed, is one functions/lambda/env.ts starts with", () => {
    // What CloudFormation and Lambda make of it: references resolved, AWS_REGION set, and the
    // secrets filled in by infra/aws/entries/ (lambda-secrets.ts) before the function loads.
    const resolve = (v: unknown) =>
      typeof v === "string" ? v : JSON.stringify(v).includes("Table") ? "Edgepilot-Table-1A2B3C" : "resolved";
    for (const [r, mode] of [
      [t, "jwt"],
      [tk, "token"],
      [tca, "jwt"],
    ] as const)
      for (const [fn, required] of [
        ["Ingest", ["EDGEPILOT_DEBOUNCE_FUNCTION"]],
        ["Debounce", []],
        ["Xds", []],
      ] as const) {
        const vars = (r[idOf(r, "AWS::Lambda::Function", fn)]?.Properties?.Environment as { Variables: Json })
          .Variables;
        const env: Record<string, string> = { AWS_REGION: "eu-west-1" };
        for (const [k, v] of Object.entries(vars)) env[k] = resolve(v);
        if (env.EDGEPILOT_TOKEN_SECRET_ARN) env.EDGEPILOT_TOKEN = "ingest-token-0123456789abcdef";
        if (env.EDGEPILOT_XDS_TOKEN_SECRET_ARN) env.EDGEPILOT_XDS_TOKEN = "xds-token-0123456789abcdef";
        const parsed = parseLambdaEnv(env, required);
        expect(parsed.ok ? [] : parsed.errors, `${mode} ${fn}`).toEqual([]);
        if (parsed.ok && fn === "Ingest") expect(parsed.config.token).toBe("ingest-token-0123456789abcdef");
        if (parsed.ok && fn === "Xds") expect(parsed.config.xdsAuth.mode).toBe(mode);
      }
  });

  it("Function URLs: ingest buffered, xds streaming, both authenticated by the app; none for debounce", () => {
    const urls = ofType(t, "AWS::Lambda::Url").map(([, r]) => r.Properties);
    expect(urls).toHaveLength(2);
    expect(urls).toContainEqual({
      AuthType: "NONE",
      TargetFunctionArn: arn(idOf(t, "AWS::Lambda::Function", "Ingest")),
    });
    expect(urls).toContainEqual({
      AuthType: "NONE",
      InvokeMode: "RESPONSE_STREAM",
      TargetFunctionArn: arn(idOf(t, "AWS::Lambda::Function", "Xds")),
    });
    // The resource policies open the URLs and nothing else: never the debounce function.
    const debounce = arn(idOf(t, "AWS::Lambda::Function", "Debounce"));
    for (const [, p] of ofType(t, "AWS::Lambda::Permission")) {
      expect(p.Properties?.FunctionName).not.toEqual(debounce);
      expect(
        p.Properties?.FunctionUrlAuthType === "NONE" || p.Properties?.InvokedViaFunctionUrl === true,
      ).toBe(true);
    }
  });

  it("the schedule invokes the debounce every minute with a role that may do only that", () => {
    const schedule = t[idOf(t, "AWS::Scheduler::Schedule", "DebounceSchedule")] as Resource;
    const roleId = idOf(t, "AWS::IAM::Role", "DebounceScheduleRole");
    const debounce = arn(idOf(t, "AWS::Lambda::Function", "Debounce"));
    expect(schedule.Properties).toMatchObject({
      ScheduleExpression: "rate(1 minute)",
      FlexibleTimeWindow: { Mode: "OFF" },
      State: "ENABLED",
      Target: { Arn: debounce, RoleArn: arn(roleId) },
    });
    const trust = (t[roleId]?.Properties?.AssumeRolePolicyDocument as { Statement: Json[] }).Statement;
    expect(trust).toEqual([
      {
        Action: "sts:AssumeRole",
        Effect: "Allow",
        Principal: { Service: "scheduler.amazonaws.com" },
        Condition: { StringEquals: { "aws:SourceAccount": ref("AWS::AccountId") } },
      },
    ]);
    expect(statementsByRole(t).get(roleId)).toEqual([
      { Action: "lambda:InvokeFunction", Effect: "Allow", Resource: debounce },
    ]);
  });

  it("each function role: its own log group, exactly the adapter's table actions, and only its extra grant", () => {
    for (const [r, mode] of [
      [t, "jwt"],
      [tk, "token"],
      [tca, "plug-in CA"],
    ] as const) {
      const byRole = statementsByRole(r);
      const table = arn(idOf(r, "AWS::DynamoDB::Table", "Table"));
      const tableStatement = { Action: [...tableActions], Effect: "Allow", Resource: table };
      const logs = (prefix: string) => ({
        Action: ["logs:CreateLogStream", "logs:PutLogEvents"],
        Effect: "Allow",
        Resource: arn(idOf(r, "AWS::Logs::LogGroup", `${prefix}Logs`)),
      });
      const secret = (id: string) => ({
        Action: "secretsmanager:GetSecretValue",
        Effect: "Allow",
        Resource: ref(idOf(r, "AWS::SecretsManager::Secret", id)),
      });
      const expected: Record<string, Json[]> = {
        Ingest: [
          logs("Ingest"),
          {
            Action: "lambda:InvokeFunction",
            Effect: "Allow",
            Resource: arn(idOf(r, "AWS::Lambda::Function", "Debounce")),
          },
          tableStatement,
          secret("IngestToken"),
        ],
        Debounce: [logs("Debounce"), tableStatement],
        Xds:
          mode === "token"
            ? [logs("Xds"), tableStatement, secret("XdsToken")]
            : mode === "plug-in CA"
              ? [
                  logs("Xds"),
                  tableStatement,
                  {
                    Action: "secretsmanager:GetSecretValue",
                    Effect: "Allow",
                    Resource: ["ca-cert", "ca-key", "cert-chain", "root-cert"].map(secretArn),
                  },
                ]
              : [logs("Xds"), tableStatement],
      };
      for (const [fn, statements] of Object.entries(expected)) {
        const roleId = idOf(r, "AWS::IAM::Role", `${fn}Role`);
        expect(byRole.get(roleId), `${mode} ${fn}`).toEqual(statements);
        const role = r[roleId] as Resource;
        expect(role.Properties?.ManagedPolicyArns, `${fn}: no managed policy`).toBeUndefined();
        const fnProps = r[idOf(r, "AWS::Lambda::Function", fn)]?.Properties as Json;
        expect(fnProps.Role).toEqual(arn(roleId));
      }
      // Four roles, four inline policies: nothing else grants anything.
      expect(ofType(r, "AWS::IAM::Role")).toHaveLength(4);
      expect(byRole.size).toBe(4);
      // No wildcard action or resource anywhere (the log group ARN is a GetAtt, never a pattern).
      const text = JSON.stringify(ofType(r, "AWS::IAM::Policy"));
      expect(text).not.toMatch(/"dynamodb:\*"|"\*"|:\*"|\/\*"/);
    }
  });

  it("log groups: one per function, the function logs there, retention as set", () => {
    for (const [r, days] of [
      [t, 30],
      [tk, 14],
    ] as const) {
      expect(ofType(r, "AWS::Logs::LogGroup")).toHaveLength(3);
      for (const fn of ["Ingest", "Debounce", "Xds"]) {
        const group = idOf(r, "AWS::Logs::LogGroup", `${fn}Logs`);
        expect(r[group]?.Properties).toEqual({ RetentionInDays: days });
        const fnProps = r[idOf(r, "AWS::Lambda::Function", fn)]?.Properties as Json;
        expect(fnProps.LoggingConfig).toEqual({ LogGroup: ref(group) });
      }
    }
  });
});

describe("infra/aws context", () => {
  const issuer = "https://oidc.eks.eu-west-1.amazonaws.com/id/ABC";
  const cases: { name: string; context: Json; ok?: StackSettings; errors?: RegExp[] }[] = [
    {
      name: "jwt with issuer and JWKS URL; audience defaults to edgepilot, retention to 30",
      context: { xdsJwtIssuer: issuer, xdsJwksUrl: `${issuer}/keys` },
      ok: {
        xdsAuth: { mode: "jwt", issuer, audience: "edgepilot", jwksUrl: `${issuer}/keys` },
        logRetentionDays: 30,
      },
    },
    {
      name: "token, retention from a -c string",
      context: { xdsAuth: "token", logRetentionDays: "90" },
      ok: { xdsAuth: { mode: "token" }, logRetentionDays: 90 },
    },
    {
      name: "jwt without its settings names both context keys",
      context: { xdsAuth: "jwt" },
      errors: [/^context xdsJwtIssuer \(XDS_JWT_ISSUER: /, /^context xdsJwksUrl \(XDS_JWKS_URL: /],
    },
    {
      name: "a JWKS URL that is no URL",
      context: { xdsJwtIssuer: issuer, xdsJwksUrl: "keys.json" },
      errors: [/^context xdsJwksUrl \(XDS_JWKS_URL=keys\.json: not an http\(s\) URL\)$/],
    },
    {
      name: "an unknown mode",
      context: { xdsAuth: "none" },
      errors: [/^context xdsAuth=none: not one of jwt, token$/],
    },
    {
      name: "a plug-in CA: the four secrets' complete ARNs",
      context: {
        xdsJwtIssuer: issuer,
        xdsJwksUrl: `${issuer}/keys`,
        caCertSecretArn: secretArn("ca-cert"),
        caKeySecretArn: secretArn("ca-key"),
        certChainSecretArn: secretArn("cert-chain"),
        rootCertSecretArn: secretArn("root-cert"),
      },
      ok: {
        xdsAuth: { mode: "jwt", issuer, audience: "edgepilot", jwksUrl: `${issuer}/keys` },
        logRetentionDays: 30,
        pluginCaSecretArns: {
          CA_CERT_PEM: secretArn("ca-cert"),
          CA_KEY_PEM: secretArn("ca-key"),
          CERT_CHAIN_PEM: secretArn("cert-chain"),
          ROOT_CERT_PEM: secretArn("root-cert"),
        },
      },
    },
    {
      name: "a plug-in CA in part names each missing key",
      context: {
        xdsJwtIssuer: issuer,
        xdsJwksUrl: `${issuer}/keys`,
        caCertSecretArn: secretArn("ca-cert"),
        caKeySecretArn: secretArn("ca-key"),
      },
      errors: [
        /^context certChainSecretArn: not set: a plug-in CA needs all of caCertSecretArn, caKeySecretArn, certChainSecretArn, rootCertSecretArn$/,
        /^context rootCertSecretArn: not set: /,
      ],
    },
    {
      name: "a secret's name or partial ARN (IAM would need a wildcard for its suffix)",
      context: {
        xdsJwtIssuer: issuer,
        xdsJwksUrl: `${issuer}/keys`,
        caCertSecretArn: "edgepilot/ca-cert",
        caKeySecretArn: "arn:aws:secretsmanager:eu-west-1:123456789012:secret:edgepilot/ca-key",
        certChainSecretArn: secretArn("cert-chain"),
        rootCertSecretArn: secretArn("root-cert"),
      },
      errors: [
        /^context caCertSecretArn=edgepilot\/ca-cert: not a complete Secrets Manager secret ARN/,
        /^context caKeySecretArn=arn:aws:secretsmanager:.*:secret:edgepilot\/ca-key: not a complete/,
      ],
    },
    {
      name: "a plug-in CA with xdsAuth=token (the CA authenticates by JWT)",
      context: {
        xdsAuth: "token",
        caCertSecretArn: secretArn("ca-cert"),
        caKeySecretArn: secretArn("ca-key"),
        certChainSecretArn: secretArn("cert-chain"),
        rootCertSecretArn: secretArn("root-cert"),
      },
      errors: [
        /^context caCertSecretArn, .*: the CA authenticates its callers by service-account JWTs, so it is served only with xdsAuth=jwt$/,
      ],
    },
    {
      name: "a retention CloudWatch does not offer",
      context: { xdsAuth: "token", logRetentionDays: 31 },
      errors: [/^context logRetentionDays=31: not a CloudWatch Logs retention/],
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      const r = parseStackSettings((key) => c.context[key]);
      if (c.ok) expect(r).toEqual({ ok: true, value: c.ok });
      else {
        expect(r.ok).toBe(false);
        const errors = r.ok ? [] : r.errors;
        expect(errors).toHaveLength(c.errors?.length ?? 0);
        for (const [i, e] of (c.errors ?? []).entries()) expect(errors[i]).toMatch(e);
      }
    });
});

describe("infra/aws with the CDK CLI", () => {
  // About 15 s: the CLI, tsx, and esbuild for the three real entries. The pinned CLI (package.json)
  // must read the cloud assembly schema aws-cdk-lib writes: a CLI that cannot fails here.
  it("npx cdk synth (cdk.json) runs offline and exits 0", () => {
    const out = mkdtempSync(join(tmpdir(), "edgepilot-cdk-"));
    try {
      execFileSync(
        "npx",
        ["cdk", "synth", "--no-notices", "--no-version-reporting", "-q", "-o", out, "-c", "xdsAuth=token"],
        {
          cwd: join(root, "infra", "aws"),
          stdio: "pipe",
          env: { ...process.env, CDK_DISABLE_CLI_TELEMETRY: "true", CI: "true" },
          timeout: 120_000,
        },
      );
      const template = JSON.parse(readFileSync(join(out, "Edgepilot.template.json"), "utf8")) as {
        Resources: Record<string, Resource>;
      };
      expect(ofType(template.Resources, "AWS::Lambda::Function")).toHaveLength(3);
      expect(ofType(template.Resources, "AWS::Scheduler::Schedule")).toHaveLength(1);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 120_000);
});
