/** Mounts Connect routes on a hono app, so Connect, gRPC-Web and gRPC unary work over fetch. */
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { createConnectRouter } from "@connectrpc/connect";
import { createFetchHandler } from "@connectrpc/connect/protocol";
import type { Hono } from "hono";

/** Registers every procedure at its canonical path `/<package>.<Service>/<Method>`, behind `interceptors` (auth). */
export function mountConnect(
  app: Hono,
  routes: (router: ConnectRouter) => void,
  interceptors: Interceptor[] = [],
): void {
  const router = createConnectRouter({ interceptors });
  routes(router);
  for (const handler of router.handlers) {
    const fetchHandler = createFetchHandler(handler);
    app.post(handler.requestPath, (c) => fetchHandler(c.req.raw));
  }
}
