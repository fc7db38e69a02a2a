/** How a watch's end, as client-node's Watch reports it to its done callback, reads to the kind machine. */

/** The fields of a watchEnded input (lib/relay/kind-machine.ts) that say how the watch ended. */
export interface WatchEnd {
  status?: number;
  error?: string;
}

/**
 * Reads the error client-node's Watch passes to done: none (the server closed the stream) is a clean
 * end; a TimeoutError is client-node 2's inactivity timeout (no byte for 30s, shorter than the API
 * server's bookmark interval), which is also a clean end, so a quiet watch resumes at once from its
 * last resourceVersion instead of being backed off as a failure; anything else is a failure, with
 * the HTTP status when the API server answered one.
 */
export function watchEnd(err: unknown): WatchEnd {
  if (err == null || isTimeout(err)) return {};
  const status = (err as { statusCode?: unknown }).statusCode;
  return {
    ...(typeof status === "number" && { status }),
    error: err instanceof Error ? err.message : String(err),
  };
}

function isTimeout(err: unknown): boolean {
  return typeof err === "object" && (err as { name?: unknown }).name === "TimeoutError";
}
