/**
 * DeltaPollService's Connect routes, runtime-neutral: Poll and Watch from lib/xds/poll-serve.ts,
 * with refusals mapped to Connect codes and Any payloads rendered through the xDS JSON registry.
 */
import { Code, ConnectError, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import { DeltaPollService } from "../lib/gen/edgepilot/xds/v1/poll_pb.ts";
import type { Limits } from "../lib/xds/limits.ts";
import { PollRefusedError, type PollServer } from "../lib/xds/poll-serve.ts";
import { xdsRegistry } from "../lib/xds/registry.ts";

/** Registers DeltaPollService over `server`; request bodies over `maxRequestBytes` get ResourceExhausted. */
export function createPollRoutes(
  server: PollServer,
  limits: Pick<Limits, "maxRequestBytes">,
): (router: ConnectRouter) => void {
  const options = { jsonOptions: { registry: xdsRegistry }, readMaxBytes: limits.maxRequestBytes };
  return (router) => {
    router.service(
      DeltaPollService,
      {
        async poll(req, ctx) {
          try {
            return await server.poll(req, { signal: ctx.signal, maxWaitMs: clientWaitMs(ctx) });
          } catch (err) {
            throw toConnectError(err);
          }
        },
        async *watch(req, ctx) {
          try {
            yield* server.watch(req, { signal: ctx.signal });
          } catch (err) {
            throw toConnectError(err);
          }
        },
      },
      options,
    );
  };
}

/** How long a long poll may hold its answer so it still beats the client's own deadline. */
function clientWaitMs(ctx: HandlerContext): number | undefined {
  const t = ctx.timeoutMs();
  return t === undefined ? undefined : Math.floor(t * 0.9);
}

function toConnectError(err: unknown): unknown {
  if (!(err instanceof PollRefusedError)) return err;
  return new ConnectError(
    err.message,
    err.reason === "invalid" ? Code.InvalidArgument : Code.ResourceExhausted,
  );
}
