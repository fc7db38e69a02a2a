/**
 * AWS Lambda entry of the debounce (EventBridge Scheduler every minute, and ingest's asynchronous
 * invocations): `handler`. Built once per container at module load (functions/lambda/debounce-host.ts).
 */
import { createDebounceHandler } from "./debounce-host.ts";
import { lambdaDeps } from "./env.ts";

const loadedAt = performance.now();

/** The debounce handler: runs turns until nothing is due or the invocation's time is short. */
export const handler = createDebounceHandler({ ...lambdaDeps(process.env), loadedAt });
