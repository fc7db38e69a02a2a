/**
 * The function URL side of the local Lambda harness (lambda-harness.ts): a request as a payload
 * format 2.0 event (as AWS documents it: version, routeKey "$default", rawPath, rawQueryString,
 * cookies, lower-cased headers with repeated values comma-joined, queryStringParameters,
 * requestContext.http, the body base64-encoded unless textual), a buffered handler's result as the
 * HTTP answer, and a streamed one split on the `awslambda.HttpResponseStream` prelude (JSON, then 8
 * NUL bytes) the runtime writes before the body.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

/** The content type HttpResponseStream.from gives a stream whose bytes start with the prelude. */
export const preludeType = "application/vnd.awslambda.http-integration-response";

/**
 * Where a streaming handler's bytes go: with the prelude, its status, headers and cookies answer
 * and the rest streams; without (a plain response stream), 200 with the stream's content type.
 * `null` ends the response.
 */
export function streamedResponse(res: ServerResponse): (chunk: Uint8Array | null, type: string) => void {
  let prelude: Buffer | undefined = Buffer.alloc(0);
  return (chunk, type) => {
    if (res.destroyed) return;
    if (!res.headersSent && type !== preludeType) {
      res.writeHead(200, { "content-type": type });
      prelude = undefined;
    }
    if (prelude !== undefined && chunk) {
      const held: Buffer = Buffer.concat([prelude, chunk]);
      prelude = held;
      const at = held.indexOf(Buffer.alloc(8));
      if (at < 0) return;
      const meta = JSON.parse(held.subarray(0, at).toString("utf8")) as StreamPrelude;
      const rest = held.subarray(at + 8);
      prelude = undefined;
      res.writeHead(meta.statusCode ?? 200, {
        ...meta.headers,
        ...(meta.cookies?.length && { "set-cookie": meta.cookies }),
      });
      res.flushHeaders();
      if (rest.byteLength > 0) res.write(rest);
      return;
    }
    if (chunk) res.write(chunk);
    else {
      if (!res.headersSent) res.writeHead(200);
      res.end();
    }
  };
}

interface StreamPrelude {
  statusCode?: number;
  headers?: Record<string, string>;
  cookies?: string[];
}

/** The whole request body. */
export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/** Whether a function URL passes a body as text (else base64), by its content type. */
function textual(type: string | undefined): boolean {
  if (!type) return false;
  return /^text\/|[/+](json|xml)\b|^application\/(x-www-form-urlencoded|javascript)/i.test(type);
}

/** A function URL's event, payload format 2.0. */
export function functionUrlEvent(req: IncomingMessage, body: Buffer, name: string) {
  const url = new URL(req.url ?? "/", "http://x");
  const headers: Record<string, string> = {};
  let cookies: string[] | undefined;
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined) continue;
    const value = Array.isArray(v) ? v.join(",") : v;
    if (k === "cookie") cookies = value.split(/;\s*/);
    else headers[k] = value;
  }
  const query: Record<string, string> = {};
  for (const [k, v] of url.searchParams) query[k] = k in query ? `${query[k]},${v}` : v;
  const apiId = name.toLowerCase().replace(/[^a-z0-9]/g, "");
  const now = new Date();
  const text = textual(headers["content-type"]);
  return {
    version: "2.0",
    routeKey: "$default",
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    ...(cookies && { cookies }),
    headers,
    ...(Object.keys(query).length > 0 && { queryStringParameters: query }),
    requestContext: {
      accountId: "anonymous",
      apiId,
      domainName: `${apiId}.lambda-url.us-east-1.on.aws`,
      domainPrefix: apiId,
      http: {
        method: req.method ?? "GET",
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? "127.0.0.1",
        userAgent: headers["user-agent"] ?? "",
      },
      requestId: randomUUID(),
      routeKey: "$default",
      stage: "$default",
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    ...(body.byteLength > 0 && { body: text ? body.toString("utf8") : body.toString("base64") }),
    isBase64Encoded: body.byteLength > 0 && !text,
  };
}

/** A buffered handler's result as the function URL answers it. */
export function writeResult(res: ServerResponse, result: unknown) {
  const r = (result ?? {}) as {
    statusCode?: number;
    headers?: Record<string, string>;
    cookies?: string[];
    body?: string;
    isBase64Encoded?: boolean;
  };
  if (typeof result !== "object" || r.statusCode === undefined) {
    // No statusCode: Lambda answers 200 with the result as JSON.
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(result ?? null));
    return;
  }
  const body =
    r.body === undefined ? Buffer.alloc(0) : Buffer.from(r.body, r.isBase64Encoded ? "base64" : "utf8");
  res.writeHead(r.statusCode, { ...r.headers, ...(r.cookies?.length && { "set-cookie": r.cookies }) });
  res.end(body);
}
