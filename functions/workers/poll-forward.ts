/**
 * The Worker's side of Poll and Watch: each call is authenticated here (XDS_AUTH), then forwarded
 * into the MeshStore (poll-host.ts) with the verified identity in `x-edgepilot-identity` (replacing
 * any value the client sent; the object checks the node against it and refuses calls without it), whose response (a held answer, or a stream of deltas) is
 * returned as is. A refused call never reaches the object: it is answered here with Connect's
 * Unauthenticated in the caller's protocol. The request body is read first, keeping at most one
 * byte past EDGEPILOT_MAX_REQUEST_BYTES: the object answers the size error itself, and no pump is
 * left reading the client's body after the answer went out.
 */
import { Code, ConnectError, createConnectRouter } from "@connectrpc/connect";
import { createFetchHandler } from "@connectrpc/connect/protocol";
import type { Hono } from "hono";
import type { XdsGuard } from "../../lib/auth/guard.ts";
import { DeltaPollService } from "../../lib/gen/edgepilot/xds/v1/poll_pb.ts";
import { forwardedIdentityHeader } from "../auth.ts";
import { readUpTo } from "../body.ts";

/** Routes DeltaPollService's procedures on `app` to `forward` (the MeshStore stub's fetch), once authenticated. */
export function mountPollForward(
  app: Hono,
  maxRequestBytes: number,
  guard: XdsGuard,
  forward: (request: Request) => Promise<Response>,
): void {
  for (const method of Object.values(DeltaPollService.method)) {
    app.post(`/${DeltaPollService.typeName}/${method.name}`, async (c) => {
      const auth = await guard.authenticate(c.req.header("authorization"));
      if (!auth.ok) return refuse(c.req.raw, new ConnectError(auth.message, Code.Unauthenticated));
      const { bytes } = await readUpTo(c.req.raw, maxRequestBytes + 1);
      const headers = new Headers(c.req.raw.headers);
      headers.delete("content-length");
      // The object trusts this header (it is reachable only through its binding): always ours.
      headers.set(forwardedIdentityHeader, JSON.stringify(auth.identity));
      return forward(
        new Request(c.req.raw.url, { method: "POST", headers, body: bytes, signal: c.req.raw.signal }),
      );
    });
  }
}

/** Answers `request` with `error` in whatever protocol it speaks (Connect, gRPC-Web, gRPC; unary or streaming). */
function refuse(request: Request, error: ConnectError): Promise<Response> {
  const router = createConnectRouter().service(DeltaPollService, {
    poll() {
      throw error;
    },
    // biome-ignore lint/correctness/useYield: refuses before the first message.
    async *watch() {
      throw error;
    },
  });
  const path = new URL(request.url).pathname;
  const handler = router.handlers.find((h) => h.requestPath === path);
  if (!handler) return Promise.resolve(Response.json({ error: error.rawMessage }, { status: 401 }));
  return createFetchHandler(handler)(request);
}
