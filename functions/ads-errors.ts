/**
 * The one mapping of the xDS server's refusals to Connect codes: lib/xds raises transport-neutral
 * errors (lib/xds/ads-handlers.ts), and every transport that serves them (connect's routes, Node's
 * direct HTTP/2 ADS path) sends the same gRPC status and message.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { AdsRefusedError } from "../lib/xds/ads-handlers.ts";
import { ResponseTooLargeError } from "../lib/xds/budget.ts";

/**
 * A refused stream or request ▶ InvalidArgument or ResourceExhausted as its code says; an answer
 * over EDGEPILOT_MAX_RESPONSE_BYTES that cannot be cut ▶ ResourceExhausted; anything else as is.
 */
export function toConnectError(e: unknown): unknown {
  if (e instanceof AdsRefusedError) {
    return new ConnectError(
      e.message,
      e.code === "invalid-argument" ? Code.InvalidArgument : Code.ResourceExhausted,
    );
  }
  return e instanceof ResponseTooLargeError ? new ConnectError(e.message, Code.ResourceExhausted) : e;
}
