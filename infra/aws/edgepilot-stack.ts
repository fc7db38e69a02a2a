/**
 * edgepilot's AWS host as one CDK stack: the DynamoDB table (the schema lib/store/dynamodb-table.ts
 * defines), the ingest, debounce and xds functions (xds also serves the CA, over the table's
 * self-signed root or the operator's plug-in CA secrets), their Function URLs, the one-minute
 * schedule that drives the debounce, and roles that may do exactly what the code does. Every grant is a
 * statement written here, with no managed policy and no wildcard on the table, so the template
 * test can assert the whole of each role.
 */
import { join } from "node:path";
import { CfnOutput, Duration, RemovalPolicy, Stack, type StackProps } from "aws-cdk-lib";
import * as dynamodb from "aws-cdk-lib/aws-dynamodb";
import * as iam from "aws-cdk-lib/aws-iam";
import * as lambda from "aws-cdk-lib/aws-lambda";
import * as scheduler from "aws-cdk-lib/aws-scheduler";
import * as secretsmanager from "aws-cdk-lib/aws-secretsmanager";
import type { Construct } from "constructs";
import { tableActions, tableKeySchema, ttlAttribute } from "../../lib/store/dynamodb-table.ts";
import type { StackSettings } from "./context.ts";
import { createEdgepilotFunction } from "./lambda-function.ts";
import { secretArnSuffix } from "./lambda-secrets.ts";

/** The three functions, by their entry file's name in functions/lambda/. */
export type FunctionName = "ingest" | "debounce" | "xds";

export interface EdgepilotStackProps extends StackProps {
  settings: StackSettings;
  /** The repository root (bundling's working directory). */
  projectRoot: string;
}

/** Secrets are read by the function at cold start through the Parameters and Secrets extension. */
const secretsExtension = lambda.ParamsAndSecretsLayerVersion.fromVersion(
  lambda.ParamsAndSecretsVersions.V1_0_103,
  { cacheEnabled: true, cacheSize: 10, logLevel: lambda.ParamsAndSecretsLogLevel.WARN },
);

/** The stack (see the module comment). */
export class EdgepilotStack extends Stack {
  readonly table: dynamodb.Table;

  constructor(scope: Construct, id: string, props: EdgepilotStackProps) {
    super(scope, id, props);
    const { settings, projectRoot } = props;
    // Ingest and xds read a secret: their deployed entries fill it in before the function loads.
    const entry = (name: FunctionName) =>
      name === "debounce"
        ? join(projectRoot, "functions", "lambda", "debounce.ts")
        : join(projectRoot, "infra", "aws", "entries", `${name}.ts`);

    this.table = new dynamodb.Table(this, "Table", {
      partitionKey: {
        name: tableKeySchema.partitionKey.name,
        type: dynamodb.AttributeType.STRING,
      },
      sortKey: { name: tableKeySchema.sortKey.name, type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: ttlAttribute,
      // The mesh outlives the stack: deleting the stack leaves the table, and the table refuses
      // deletion until protection is turned off by hand.
      removalPolicy: RemovalPolicy.RETAIN,
      deletionProtection: true,
    });
    const storeEnv = {
      EDGEPILOT_STORE: "dynamodb",
      DYNAMODB_TABLE: this.table.tableName,
      LOG_FORMAT: "json",
    };
    const common = { projectRoot, logRetentionDays: settings.logRetentionDays };
    // Every edgepilot Lambda must name its XDS_AUTH (lib/config.ts: a function URL is reachable from
    // anywhere). Ingest and debounce serve no xDS read (ingest's /ready is unauthenticated on every
    // host), so they say `none` rather than hold the proxies' settings or secret.
    const noReads = { XDS_AUTH: "none" };

    // Ingest's bearer token: generated here, read by the function, shown to the relay by
    // `aws secretsmanager get-secret-value` (docs/tasks/aws.md: Deploy to AWS).
    const ingestToken = new secretsmanager.Secret(this, "IngestToken", {
      description: "edgepilot EDGEPILOT_TOKEN: the relay's and the admission webhook's bearer token",
      generateSecretString: { passwordLength: 48, excludePunctuation: true },
    });

    const debounce = createEdgepilotFunction(this, "Debounce", {
      ...common,
      entry: entry("debounce"),
      memorySize: 1024,
      timeout: Duration.minutes(5),
      environment: { ...storeEnv, ...noReads },
      description: "edgepilot debounce: coalesces queued pushes and publishes (schedule and after ingest)",
    });
    // A failed turn is not retried by Lambda: the next ingest or the schedule's next minute runs it.
    debounce.fn.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.minutes(1) });

    const ingest = createEdgepilotFunction(this, "Ingest", {
      ...common,
      entry: entry("ingest"),
      memorySize: 1024,
      timeout: Duration.seconds(60),
      environment: {
        ...storeEnv,
        ...noReads,
        EDGEPILOT_DEBOUNCE_FUNCTION: debounce.fn.functionName,
        EDGEPILOT_TOKEN_SECRET_ARN: ingestToken.secretArn,
      },
      paramsAndSecrets: secretsExtension,
      description: "edgepilot ingest: Kubernetes watch events, resyncs and AdmissionReviews",
    });
    ingest.fn.addToRolePolicy(
      new iam.PolicyStatement({ actions: ["lambda:InvokeFunction"], resources: [debounce.fn.functionArn] }),
    );

    const xdsEnv: Record<string, string> = { ...storeEnv, XDS_AUTH: settings.xdsAuth.mode };
    let xdsToken: secretsmanager.Secret | undefined;
    if (settings.xdsAuth.mode === "jwt") {
      xdsEnv.XDS_JWT_ISSUER = settings.xdsAuth.issuer;
      xdsEnv.XDS_JWT_AUDIENCE = settings.xdsAuth.audience;
      xdsEnv.XDS_JWKS_URL = settings.xdsAuth.jwksUrl;
    } else {
      xdsToken = new secretsmanager.Secret(this, "XdsToken", {
        description: "edgepilot EDGEPILOT_XDS_TOKEN: the proxies' (agents') bearer token (XDS_AUTH=token)",
        generateSecretString: { passwordLength: 48, excludePunctuation: true },
      });
      xdsEnv.EDGEPILOT_XDS_TOKEN_SECRET_ARN = xdsToken.secretArn;
    }
    // A plug-in CA: the xDS function reads the operator's four secrets as it reads its token.
    const pluginCa = settings.pluginCaSecretArns;
    if (pluginCa)
      for (const [variable, arn] of Object.entries(pluginCa)) xdsEnv[`${variable}${secretArnSuffix}`] = arn;
    const xds = createEdgepilotFunction(this, "Xds", {
      ...common,
      entry: entry("xds"),
      memorySize: 512,
      // A Watch stream lives as long as the invocation: the agent reconnects when it ends.
      timeout: Duration.minutes(15),
      environment: xdsEnv,
      ...(xdsToken || pluginCa ? { paramsAndSecrets: secretsExtension } : {}),
      description: "edgepilot xds: Connect Fetch*, Poll, Watch (response streaming) and CreateCertificate",
    });

    for (const f of [ingest, debounce, xds])
      f.role.addToPolicy(
        new iam.PolicyStatement({ actions: [...tableActions], resources: [this.table.tableArn] }),
      );
    const readSecret = (f: typeof ingest, secret: secretsmanager.Secret) => {
      f.role.addToPolicy(
        new iam.PolicyStatement({
          actions: ["secretsmanager:GetSecretValue"],
          resources: [secret.secretArn],
        }),
      );
    };
    readSecret(ingest, ingestToken);
    if (xdsToken) readSecret(xds, xdsToken);
    if (pluginCa)
      xds.role.addToPolicy(
        new iam.PolicyStatement({
          actions: ["secretsmanager:GetSecretValue"],
          resources: Object.values(pluginCa),
        }),
      );

    // Open URLs, authenticated by the app: the relay, the API server's admission webhook and the
    // proxies send a bearer token and none of them can sign SigV4.
    const ingestUrl = ingest.fn.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.NONE });
    const xdsUrl = xds.fn.addFunctionUrl({
      authType: lambda.FunctionUrlAuthType.NONE,
      invokeMode: lambda.InvokeMode.RESPONSE_STREAM,
    });

    // The safety net: one debounce turn a minute, by a role that may invoke that function only.
    const scheduleRole = new iam.Role(this, "DebounceScheduleRole", {
      assumedBy: new iam.ServicePrincipal("scheduler.amazonaws.com", {
        conditions: { StringEquals: { "aws:SourceAccount": this.account } },
      }),
      description: "edgepilot: EventBridge Scheduler invokes the debounce function",
    });
    scheduleRole.addToPolicy(
      new iam.PolicyStatement({ actions: ["lambda:InvokeFunction"], resources: [debounce.fn.functionArn] }),
    );
    new scheduler.CfnSchedule(this, "DebounceSchedule", {
      description: "edgepilot: the debounce's one-minute safety net",
      scheduleExpression: "rate(1 minute)",
      flexibleTimeWindow: { mode: "OFF" },
      state: "ENABLED",
      target: {
        arn: debounce.fn.functionArn,
        roleArn: scheduleRole.roleArn,
        retryPolicy: { maximumRetryAttempts: 0, maximumEventAgeInSeconds: 60 },
      },
    });

    new CfnOutput(this, "IngestUrl", { value: ingestUrl.url, description: "the relay's EDGEPILOT_URL" });
    new CfnOutput(this, "XdsUrl", { value: xdsUrl.url, description: "the agent's EDGEPILOT_AGENT_UPSTREAM" });
    new CfnOutput(this, "TableName", { value: this.table.tableName });
    new CfnOutput(this, "IngestTokenSecret", { value: ingestToken.secretArn });
    if (xdsToken) new CfnOutput(this, "XdsTokenSecret", { value: xdsToken.secretArn });
  }
}
