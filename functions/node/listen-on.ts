/** Starting a Node server's listener so that a failure is one line naming the port and its variable. */
import { type ListenTarget, listenError } from "../../lib/listen-error.ts";

/** Resolves once `server` listens (`start` calls its listen); rejects with listenError naming `target` (a port in use, not a stack). */
export function listenOn<
  S extends {
    once(e: string, f: (e?: Error) => void): unknown;
    off(e: string, f: (e?: Error) => void): unknown;
  },
>(server: S, start: (s: S) => void, target: ListenTarget): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (e?: Error) => reject(listenError(e, target));
    server.once("error", failed);
    server.once("listening", () => {
      server.off("error", failed);
      resolve();
    });
    start(server);
  });
}
