/**
 * The environment of the Lambda functions, read once per container at module load: the usual
 * edgepilot variables (lib/config.ts parseConfig, as on Node and the Worker; XDS_AUTH must be chosen,
 * a function URL being reachable from anywhere), the store always DynamoDB (EDGEPILOT_STORE=dynamodb
 * as Node parses it: DYNAMODB_TABLE, AWS_REGION set by Lambda, DYNAMODB_ENDPOINT for local runs). A bad
 * variable writes one line naming it and throws, so the container's init fails and Lambda reports it.
 */
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { type Config, type DynamoStoreConfig, parseConfig } from "../../lib/config.ts";
import { logError } from "../../lib/log/line-log.ts";
import { createDynamoStore } from "../../lib/store/dynamodb.ts";
import { bootLogger, createNodeLogger } from "../node/log.ts";
import type { LambdaDeps } from "./mesh.ts";

/** A configuration a Lambda refuses to start with; `errors` name each variable. */
export class LambdaConfigError extends Error {
  constructor(readonly errors: string[]) {
    super(`edgepilot: config: ${errors.join("; ")}`);
    this.name = "LambdaConfigError";
  }
}

/**
 * Parses everything a function reads with lib/config.ts (EDGEPILOT_STORE defaulting to dynamodb,
 * the only store a Lambda takes); every problem at once, each naming its variable. `required`:
 * variables this function cannot do without.
 */
export function parseLambdaEnv(
  env: Record<string, string | undefined>,
  required: readonly string[] = [],
): { ok: true; config: Config; dynamo: DynamoStoreConfig } | { ok: false; errors: string[] } {
  const errors: string[] = [];
  const store = env.EDGEPILOT_STORE || "dynamodb";
  if (store !== "dynamodb")
    errors.push(
      `EDGEPILOT_STORE=${store}: a Lambda keeps its state in DynamoDB only (unset it, or set dynamodb)`,
    );
  const parsed = parseConfig({ ...env, EDGEPILOT_STORE: "dynamodb" }, { lambda: true });
  if (!parsed.ok) errors.push(...parsed.errors);
  for (const name of required) if (!env[name]) errors.push(`${name}: required by this function, not set`);
  if (!parsed.ok || errors.length > 0) return { ok: false, errors };
  return { ok: true, config: parsed.config, dynamo: parsed.config.store as DynamoStoreConfig };
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
