/**
 * The ingest function's way to wake the debounce function: Lambda's Invoke API with InvocationType
 * "Event" (queued; Lambda answers 202 at once and runs it), through @aws-sdk/client-lambda. The
 * endpoint and credentials are the SDK's own (the execution role on AWS; AWS_ENDPOINT_URL_LAMBDA
 * for a local harness).
 */
import { InvokeCommand, type LambdaClient } from "@aws-sdk/client-lambda";
import type { InvokeDebounce } from "./ingest-host.ts";

/** The event the debounce function receives from ingest (EventBridge Scheduler sends its own). */
export const ingestWakeEvent = { source: "edgepilot.ingest" } as const;

/**
 * An InvokeDebounce calling `functionName` (EDGEPILOT_DEBOUNCE_FUNCTION: a name or an ARN) on
 * `client`; rejects when Lambda did not queue the event (anything but 202).
 */
export function lambdaInvoker(client: LambdaClient, functionName: string): InvokeDebounce {
  const payload = new TextEncoder().encode(JSON.stringify(ingestWakeEvent));
  return async () => {
    const out = await client.send(
      new InvokeCommand({ FunctionName: functionName, InvocationType: "Event", Payload: payload }),
    );
    if (out.StatusCode !== 202) throw new Error(`Invoke ${functionName}: status ${out.StatusCode}, not 202`);
  };
}
