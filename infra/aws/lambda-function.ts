/**
 * One edgepilot Lambda function as the stack builds each of the three: Node 24 on arm64, bundled
 * by the local esbuild (never Docker, so synth runs offline), its own role with no managed policy
 * (the stack grants each role exactly what it calls), and its own log group with a retention.
 */
import { type Duration, RemovalPolicy } from "aws-cdk-lib";
import * as iam from "aws-cdk-lib/aws-iam";
import * as lambda from "aws-cdk-lib/aws-lambda";
import { LogLevel, NodejsFunction, OutputFormat } from "aws-cdk-lib/aws-lambda-nodejs";
import * as logs from "aws-cdk-lib/aws-logs";
import type { Construct } from "constructs";

/** What differs between the three functions. */
export interface EdgepilotFunctionProps {
  /** The TypeScript entry exporting `handler`. */
  entry: string;
  /** The repository root: esbuild's working directory, where package-lock.json is. */
  projectRoot: string;
  memorySize: number;
  timeout: Duration;
  environment: Record<string, string>;
  logRetentionDays: number;
  description: string;
  /** The Parameters and Secrets extension, for a function that reads a secret at cold start. */
  paramsAndSecrets?: lambda.ParamsAndSecretsLayerVersion;
}

/** The function, its role and its log group: the stack adds grants to the role. */
export interface EdgepilotFunction {
  fn: NodejsFunction;
  role: iam.Role;
  logGroup: logs.LogGroup;
}

/**
 * Bundling: one ESM file for Node 24, minified, the AWS SDK included at the version
 * package-lock.json pins (the runtime's own SDK may differ from the one the tests ran against);
 * `require` is provided for the CommonJS packages the bundle holds.
 */
export const bundling = {
  format: OutputFormat.ESM,
  target: "node24",
  minify: true,
  sourceMap: false,
  externalModules: [],
  mainFields: ["module", "main"],
  banner:
    "import { createRequire as edgepilotRequire } from 'node:module'; const require = edgepilotRequire(import.meta.url);",
  forceDockerBundling: false,
  logLevel: LogLevel.WARNING,
};

/** Creates a function with its own role and log group (see the module comment). */
export function createEdgepilotFunction(
  scope: Construct,
  id: string,
  props: EdgepilotFunctionProps,
): EdgepilotFunction {
  const logGroup = new logs.LogGroup(scope, `${id}Logs`, {
    retention: props.logRetentionDays as logs.RetentionDays,
    removalPolicy: RemovalPolicy.DESTROY,
  });
  const role = new iam.Role(scope, `${id}Role`, {
    assumedBy: new iam.ServicePrincipal("lambda.amazonaws.com"),
    description: `edgepilot ${id}: logs to its own group, and only what the stack grants`,
  });
  // Only its own group: the function writes streams there and creates no group.
  logGroup.grantWrite(role);
  const fn = new NodejsFunction(scope, id, {
    entry: props.entry,
    handler: "handler",
    runtime: lambda.Runtime.NODEJS_24_X,
    architecture: lambda.Architecture.ARM_64,
    memorySize: props.memorySize,
    timeout: props.timeout,
    environment: props.environment,
    description: props.description,
    role,
    logGroup,
    projectRoot: props.projectRoot,
    depsLockFilePath: `${props.projectRoot}/package-lock.json`,
    bundling,
    ...(props.paramsAndSecrets ? { paramsAndSecrets: props.paramsAndSecrets } : {}),
  });
  return { fn, role, logGroup };
}
