/**
 * The three Lambda functions in the local invoke harness (test/support/lambda-harness.ts) over one
 * shared store: ingest and xDS behind function URLs, debounce invoked by ingest through the real
 * @aws-sdk/client-lambda. Each container builds its own handler (no memory shared but the store).
 */
import { LambdaClient } from "@aws-sdk/client-lambda";
import { createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { createDebounceHandler } from "../../../functions/lambda/debounce-host.ts";
import { createIngestHandler } from "../../../functions/lambda/ingest-host.ts";
import { lambdaInvoker } from "../../../functions/lambda/invoke.ts";
import { createXdsHandler } from "../../../functions/lambda/xds-host.ts";
import { type Config, parseConfig } from "../../../lib/config.ts";
import { DeltaPollService } from "../../../lib/gen/edgepilot/xds/v1/poll_pb.ts";
import type { Store } from "../../../lib/store/store.ts";
import { xdsRegistry } from "../../../lib/xds/registry.ts";
import { type LambdaHarness, startLambdaHarness } from "../../support/lambda-harness.ts";

export const ingestToken = "ingest-token-for-lambda-tests";
export const xdsToken = "xds-token-for-lambda-tests";

/** The functions' configuration (as their environment would give it). */
export function lambdaTestConfig(env: Record<string, string> = {}): Config {
  const parsed = parseConfig(
    {
      EDGEPILOT_TOKEN: ingestToken,
      XDS_AUTH: "token",
      EDGEPILOT_XDS_TOKEN: xdsToken,
      PILOT_DEBOUNCE_AFTER: "20ms",
      ...env,
    },
    { lambda: true },
  );
  if (!parsed.ok) throw new Error(parsed.errors.join("; "));
  return parsed.config;
}

/** The harness with the three functions over `store`; the xDS function's timeout is `xdsTimeoutMs`. */
export async function startFunctions(
  store: Store,
  options: { config?: Config; xdsTimeoutMs?: number; lines?: string[] } = {},
): Promise<LambdaHarness> {
  const config = options.config ?? lambdaTestConfig();
  const lines = options.lines ?? [];
  const log = (line: string) => void lines.push(line);
  const harness: LambdaHarness = await startLambdaHarness([
    {
      name: "ingest",
      url: true,
      timeoutMs: 10_000,
      load: async () => {
        const client = new LambdaClient({
          endpoint: harness.invokeEndpoint,
          region: "us-east-1",
          credentials: { accessKeyId: "local", secretAccessKey: "local" },
        });
        return createIngestHandler({ config, log, store, invokeDebounce: lambdaInvoker(client, "debounce") });
      },
    },
    { name: "debounce", timeoutMs: 10_000, load: async () => createDebounceHandler({ config, log, store }) },
    {
      name: "xds",
      url: true,
      timeoutMs: options.xdsTimeoutMs ?? 2_500,
      load: async () => createXdsHandler({ config, log, store }),
    },
  ]);
  return harness;
}

/** Posts a batch to the ingest function's URL. */
export function ingest(harness: LambdaHarness, events: unknown, token: string | null = ingestToken) {
  return fetch(`${harness.url("ingest")}/v1/events`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token && { authorization: `Bearer ${token}` }) },
    body: typeof events === "string" ? events : JSON.stringify(events),
  });
}

/** Connect over HTTP/1.1 to the xDS function's URL. */
export function xdsTransport(harness: LambdaHarness, binary = true): Transport {
  return createConnectTransport({
    baseUrl: harness.url("xds"),
    httpVersion: "1.1",
    useBinaryFormat: binary,
    jsonOptions: { registry: xdsRegistry },
  });
}

/** A DeltaPollService client on the xDS function. */
export function pollClient(harness: LambdaHarness) {
  return createClient(DeltaPollService, xdsTransport(harness));
}

/** The bearer header of XDS_AUTH=token. */
export const xdsAuth = { authorization: `Bearer ${xdsToken}` };
