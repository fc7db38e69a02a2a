/**
 * A stand-in for edgepilot's ingest in the relay's tests: a real HTTP server on loopback that records
 * every POST to /v1/events and /v1/resync, checks the bearer token, and can be told to fail.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** One request as received, and what it was answered. */
export interface Received {
  path: string;
  cluster: string | null;
  kind: string | null;
  /** A resync's `watching` query parameter (the kinds the relay watches), as sent. */
  watching: string | null;
  authorization: string | undefined;
  contentType: string | undefined;
  body: string;
  status: number;
}

/** A watch event as the relay posted it. */
export interface PostedEvent {
  type: string;
  object: {
    apiVersion?: string;
    kind?: string;
    metadata: { name: string; namespace?: string; resourceVersion?: string };
  };
}

/** The receiver and its test API. */
export interface Receiver {
  url: string;
  token: string;
  /** Every request, failed ones included. */
  requests: Received[];
  /** The events of every accepted /v1/events POST, in order. */
  events(): PostedEvent[];
  /** The accepted resyncs, in order, parsed. */
  resyncs(kind?: string): {
    kind: string;
    list: {
      apiVersion?: string;
      kind: string;
      metadata: { resourceVersion?: string };
      items: { metadata: { name: string } }[];
    };
  }[];
  /** Answers the next `count` requests with `status` and `body` (before the token check). */
  failNext(count: number, status: number, body?: unknown): void;
  /** Answers every request with `status` until cleared with undefined. */
  failAll(status: number | undefined): void;
  close(): Promise<void>;
}

/** Starts a receiver that wants `Bearer <token>`. */
export async function startReceiver(token = "relay-test-token"): Promise<Receiver> {
  let failCount = 0;
  let failStatus = 503;
  let failBody: unknown = { error: "told to fail" };
  let failAlways: number | undefined;
  const requests: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://receiver");
      const answer = (status: number, body: unknown) => {
        requests.push({
          path: url.pathname,
          cluster: url.searchParams.get("cluster"),
          kind: url.searchParams.get("kind"),
          watching: url.searchParams.get("watching"),
          authorization: req.headers.authorization,
          contentType: req.headers["content-type"],
          body: Buffer.concat(chunks).toString("utf8"),
          status,
        });
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      if (failAlways !== undefined) return answer(failAlways, { error: "told to fail" });
      if (failCount > 0) {
        failCount--;
        return answer(failStatus, failBody);
      }
      if (req.headers.authorization !== `Bearer ${token}`)
        return answer(401, { error: "wrong bearer token" });
      if (req.method !== "POST" || !["/v1/events", "/v1/resync"].includes(url.pathname)) {
        return answer(404, { error: "not found" });
      }
      answer(200, { ok: true });
    });
  });
  server.listen(0, "127.0.0.1");
  await new Promise<void>((resolve) => server.once("listening", resolve));
  const accepted = (path: string) => requests.filter((r) => r.path === path && r.status === 200);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    token,
    requests,
    events: () =>
      accepted("/v1/events").flatMap((r) =>
        r.body
          .split("\n")
          .filter((l) => l !== "")
          .map((l) => JSON.parse(l) as PostedEvent),
      ),
    resyncs: (kind) =>
      accepted("/v1/resync")
        .filter((r) => kind === undefined || r.kind === kind)
        .map((r) => ({ kind: r.kind ?? "", list: JSON.parse(r.body) })),
    failNext(count, status, body = { error: "told to fail" }) {
      failCount = count;
      failStatus = status;
      failBody = body;
    },
    failAll(status) {
      failAlways = status;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Polls `check` until it returns a value other than undefined/false, or throws after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  check: () => T | undefined | false,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
