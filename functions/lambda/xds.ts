/**
 * AWS Lambda entry of xDS over Connect, REST-JSON, /ready, /metrics, /debug/* and the CA (a function URL with
 * InvokeMode RESPONSE_STREAM): `handler`, wrapped in awslambda.streamifyResponse. Built once per
 * container at module load (functions/lambda/xds-host.ts). The plug-in CA's variables are read from
 * the environment too (infra/aws/entries/xds.ts fills them from Secrets Manager first).
 */
import { lambdaDeps } from "./env.ts";
import { createXdsHandler } from "./xds-host.ts";

const loadedAt = performance.now();

/** The streaming xDS handler. */
export const handler = createXdsHandler({ ...lambdaDeps(process.env), loadedAt, caVariables: process.env });
