/**
 * The Worker's side of Poll and Watch: each call is forwarded into the MeshStore (poll-host.ts),
 * whose response (a held answer, or a stream of deltas) is returned as is. The request body is
 * read here first, keeping at most one byte past EDGEPILOT_MAX_REQUEST_BYTES: the object answers
 * the size error itself, and no pump is left reading the client's body after the answer went out.
 */
import type { Hono } from "hono";
import { DeltaPollService } from "../../lib/gen/edgepilot/xds/v1/poll_pb.ts";
import { readUpTo } from "../body.ts";

/** Routes DeltaPollService's procedures on `app` to `forward` (the MeshStore stub's fetch). */
export function mountPollForward(
  app: Hono,
  maxRequestBytes: number,
  forward: (request: Request) => Promise<Response>,
): void {
  for (const method of Object.values(DeltaPollService.method)) {
    app.post(`/${DeltaPollService.typeName}/${method.name}`, async (c) => {
      const { bytes } = await readUpTo(c.req.raw, maxRequestBytes + 1);
      const headers = new Headers(c.req.raw.headers);
      headers.delete("content-length");
      return forward(
        new Request(c.req.raw.url, { method: "POST", headers, body: bytes, signal: c.req.raw.signal }),
      );
    });
  }
}
