/**
 * AWS Lambda entry of ingest (behind a function URL or an API Gateway HTTP API): `handler`. Built
 * once per container at module load (functions/lambda/ingest-host.ts); EDGEPILOT_DEBOUNCE_FUNCTION
 * names the debounce function a batch that queued a push invokes.
 */
import { LambdaClient } from "@aws-sdk/client-lambda";
import { lambdaDeps } from "./env.ts";
import { createIngestHandler } from "./ingest-host.ts";
import { lambdaInvoker } from "./invoke.ts";

const loadedAt = performance.now();
const deps = lambdaDeps(process.env, ["EDGEPILOT_DEBOUNCE_FUNCTION"]);
const debounce = process.env.EDGEPILOT_DEBOUNCE_FUNCTION as string;

/** The ingest handler (payload format 2.0 or API Gateway v1 events in, HTTP results out). */
export const handler = createIngestHandler({
  ...deps,
  loadedAt,
  invokeDebounce: lambdaInvoker(new LambdaClient({ region: process.env.AWS_REGION }), debounce),
});
