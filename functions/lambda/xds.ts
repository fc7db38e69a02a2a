/**
 * AWS Lambda entry of xDS over Connect, REST-JSON, /ready, /metrics and /debug/* (a function URL with
 * InvokeMode RESPONSE_STREAM): `handler`, wrapped in awslambda.streamifyResponse. Built once per
 * container at module load (functions/lambda/xds-host.ts).
 */
import { lambdaDeps } from "./env.ts";
import { createXdsHandler } from "./xds-host.ts";

const loadedAt = performance.now();

/** The streaming xDS handler. */
export const handler = createXdsHandler({ ...lambdaDeps(process.env), loadedAt });
