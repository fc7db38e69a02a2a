/**
 * The environment of the Lambda functions, read once per container at module load: the usual
 * edgepilot variables (lib/config.ts parseConfig, as on Node and the Worker; XDS_AUTH must be chosen,
 * a function URL being reachable from anywhere) plus the store's, always DynamoDB: DYNAMODB_TABLE
 * (default `edgepilot`), AWS_REGION (set by Lambda), DYNAMODB_ENDPOINT (local runs only). A bad
 * variable writes one line naming it and throws, so the container's init fails and Lambda reports it.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { type Config, parseConfig } from "../../lib/config.ts";
import { logError } from "../../lib/log/line-log.ts";
import { createDynamoStore } from "../../lib/store/dynamodb.ts";
import { bootLogger, createNodeLogger } from "../node/log.ts";
import type { LambdaDeps } from "./mesh.ts";

/** Where the store is. */
export interface DynamoEnv {
  table: string;
  region: string;
  /** A local DynamoDB-compatible server (dynalite); unset on AWS. */
  endpoint?: string;
}

/** A configuration a Lambda refuses to start with; `errors` name each variable. */
export class LambdaConfigError extends Error {
  constructor(readonly errors: string[]) {
    super(`edgepilot: config: ${errors.join("; ")}`);
    this.name = "LambdaConfigError";
  }
}

/** Parses everything a function reads; every problem at once, each naming its variable. */
export function parseLambdaEnv(
  env: Record<string, string | undefined>,
  required: readonly string[] = [],
): { ok: true; config: Config; dynamo: DynamoEnv } | { ok: false; errors: string[] } {
  const errors: string[] = [];
  const store = env.EDGEPILOT_STORE;
  if (store !== undefined && store !== "" && store !== "dynamodb")
    errors.push(
      `EDGEPILOT_STORE=${store}: a Lambda keeps its state in DynamoDB only (unset it, or set dynamodb)`,
    );
  // The store is ours to open; parseConfig's EDGEPILOT_STORE covers Node's choices.
  const { EDGEPILOT_STORE: _, ...rest } = env;
  const parsed = parseConfig(rest, { lambda: true });
  if (!parsed.ok) errors.push(...parsed.errors);
  const table = env.DYNAMODB_TABLE || "edgepilot";
  if (!/^[A-Za-z0-9_.-]{3,255}$/.test(table))
    errors.push(
      `DYNAMODB_TABLE=${table}: not a DynamoDB table name (3-255 of letters, digits, '_', '-', '.')`,
    );
  const region = env.AWS_REGION ?? "";
  if (region === "") errors.push("AWS_REGION: not set (Lambda sets it; set it for a local run)");
  const endpoint = env.DYNAMODB_ENDPOINT || undefined;
  if (endpoint !== undefined && !URL.canParse(endpoint))
    errors.push(`DYNAMODB_ENDPOINT=${endpoint}: not a URL (e.g. http://127.0.0.1:4567)`);
  for (const name of required) if (!env[name]) errors.push(`${name}: required by this function, not set`);
  if (!parsed.ok || errors.length > 0) return { ok: false, errors };
  return { ok: true, config: parsed.config, dynamo: { table, region, ...(endpoint && { endpoint }) } };
}

/**
 * The deps of a function from `env`: its configuration, its logger (LOG_FORMAT / LOG_LEVEL, one
 * line per entry to stdout, errors to stderr: CloudWatch Logs keeps each as one event) and the
 * DynamoDB store. Throws LambdaConfigError after logging each problem.
 */
export function lambdaDeps(
  env: Record<string, string | undefined>,
  required: readonly string[] = [],
): LambdaDeps {
  const parsed = parseLambdaEnv(env, required);
  if (!parsed.ok) {
    const boot = bootLogger(env).line;
    for (const e of parsed.errors) logError(boot, `edgepilot: config: ${e}`);
    throw new LambdaConfigError(parsed.errors);
  }
  const { config, dynamo } = parsed;
  const client = new DynamoDBClient({
    region: dynamo.region,
    ...(dynamo.endpoint && { endpoint: dynamo.endpoint }),
  });
  return {
    config,
    log: createNodeLogger(config.log).line,
    store: createDynamoStore({ client, table: dynamo.table }),
  };
}
