/**
 * Runs one SotW ADS stream: requests from the proxy and push signals are handled one at a
 * time, in arrival order, and the session's responses are yielded to the transport.
 * Pushes that arrive while one is pending coalesce into one.
 */
import type {
  DiscoveryRequest,
  DiscoveryResponse,
} from "../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { PushSignal } from "../lib/push/signal.ts";

/** What the stream needs of a session (lib/xds/sotw.ts implements it). */
export interface StreamSession {
  onRequest(req: DiscoveryRequest): Promise<DiscoveryResponse[]>;
  onPush(): Promise<DiscoveryResponse[]>;
}

type Input = { kind: "request"; req: DiscoveryRequest } | { kind: "push" } | { kind: "end"; error?: unknown };

/** Yields the session's responses until the proxy closes the stream or `signal` aborts. */
export async function* runAdsStream(
  requests: AsyncIterable<DiscoveryRequest>,
  session: StreamSession,
  pushes: PushSignal,
  signal: AbortSignal,
): AsyncGenerator<DiscoveryResponse> {
  const inbox: Input[] = [];
  let wake: (() => void) | undefined;
  let pushPending = false;
  const deliver = (input: Input) => {
    inbox.push(input);
    wake?.();
  };
  const unsubscribe = pushes.subscribe(() => {
    if (pushPending) return;
    pushPending = true;
    deliver({ kind: "push" });
  });
  const onAbort = () => deliver({ kind: "end" });
  signal.addEventListener("abort", onAbort);
  void (async () => {
    try {
      for await (const req of requests) deliver({ kind: "request", req });
      deliver({ kind: "end" });
    } catch (error) {
      deliver({ kind: "end", error });
    }
  })();
  try {
    while (!signal.aborted) {
      const input = inbox.shift();
      if (!input) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
        continue;
      }
      if (input.kind === "end") {
        if (input.error !== undefined && !signal.aborted) throw input.error;
        return;
      }
      if (input.kind === "push") pushPending = false;
      const responses =
        input.kind === "request" ? await session.onRequest(input.req) : await session.onPush();
      for (const r of responses) yield r;
    }
  } finally {
    unsubscribe();
    signal.removeEventListener("abort", onAbort);
  }
}
