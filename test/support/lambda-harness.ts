/**
 * A small local stand-in for AWS Lambda, for tests: real handler code, the real AWS SDK, real HTTP.
 *
 * - Execution environments ("containers"): each function gets a pool. An invocation takes an idle
 *   container or makes a new one by calling the function's `load(n)` (its init phase: importing the
 *   entry module, or building a handler), so concurrent invocations never share one, and a container
 *   serves one invocation at a time, as on Lambda. Nothing is shared between functions but what the
 *   test gives them (the store). A container whose invocation timed out is discarded.
 * - Context: `getRemainingTimeInMillis()` counts down from the function's `timeoutMs`; an invocation
 *   still running at its timeout is cut (a streamed response is cut mid-stream; a buffered one 502s).
 * - Function URLs (lambda-url.ts; payload format 2.0, as AWS documents it: version, routeKey "$default", rawPath,
 *   rawQueryString, cookies, lower-cased headers with repeated values comma-joined,
 *   queryStringParameters, requestContext.http, body base64-encoded unless textual): one HTTP server
 *   per function given `url: true`. A buffered handler's result `{ statusCode, headers, cookies,
 *   body, isBase64Encoded }` becomes the response. A streaming handler is answered as with InvokeMode
 *   RESPONSE_STREAM.
 * - Response streaming: the global `awslambda` the Lambda Node.js runtime provides, installed here
 *   the same way: `awslambda.streamifyResponse(handler)` marks the handler with
 *   Symbol.for("aws.lambda.runtime.handler.streaming") = "response", and the runtime then calls it as
 *   (event, responseStream, context); `awslambda.HttpResponseStream.from(stream, prelude)` sets the
 *   stream's content type to application/vnd.awslambda.http-integration-response and, before the
 *   first byte, writes the JSON prelude ({ statusCode, headers, cookies }) and 8 NUL bytes. The URL
 *   front end splits the prelude off, answers with its status and headers, and streams the rest as
 *   it is written.
 * - The Invoke API: `POST /2015-03-31/functions/<name>/invocations` on `invokeEndpoint`, what
 *   @aws-sdk/client-lambda's InvokeCommand sends. X-Amz-Invocation-Type Event ▶ 202 at once, then
 *   the function runs (`idle()` waits for such runs); RequestResponse ▶ 200 with the result as JSON
 *   (X-Amz-Function-Error: Unhandled when it threw); DryRun ▶ 204; an unknown function ▶ 404
 *   ResourceNotFoundException. Signatures are not checked, and a failed Event invocation is logged,
 *   not retried (Lambda retries it twice).
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import type { Context } from "aws-lambda";
import { functionUrlEvent, preludeType, readBody, streamedResponse, writeResult } from "./lambda-url.ts";

const streamingMark = Symbol.for("aws.lambda.runtime.handler.streaming");

// biome-ignore lint/suspicious/noExplicitAny: a Lambda handler takes whatever event its trigger sends.
type AnyHandler = (...args: any[]) => unknown;

/** One function as the harness runs it. */
export interface LambdaFunctionSpec {
  name: string;
  /** The init phase of container `n` (0, 1, ...): the handler it exports. */
  load: (n: number) => Promise<AnyHandler>;
  /** The function's timeout (ms). */
  timeoutMs: number;
  /** Serve a function URL for it. */
  url?: boolean;
}

/** A container's first invocation: how long its init took and how long until its first answer. */
export interface ColdStart {
  function: string;
  container: number;
  initMs: number;
  firstAnswerMs: number;
}

/** What a test drives. */
export interface LambdaHarness {
  /** The base URL of a function's URL (`url: true`). */
  url(name: string): string;
  /** Where LambdaClient's `endpoint` points (the Invoke API). */
  readonly invokeEndpoint: string;
  /** Invocations of `name` so far (any trigger), and its containers ever made. */
  stats(name: string): { invocations: number; containers: number };
  readonly coldStarts: readonly ColdStart[];
  /** Resolves once no asynchronous (Event) invocation is running. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

interface Container {
  n: number;
  handler: AnyHandler;
  busy: boolean;
  initMs: number;
  createdAt: number;
  answered: boolean;
}

/** Installs the `awslambda` global as the Lambda Node.js runtime provides it (see the module comment). */
export function installAwsLambdaGlobal(): void {
  // The AWS SDK's invoke store (@aws/lambda-invoke-store) may have made the object already: add to it.
  const g = globalThis as { awslambda?: Record<string, unknown> };
  if (typeof g.awslambda?.streamifyResponse === "function") return;
  // The runtime's HttpResponseStream is a class with a static `from`; an object with `from` is called alike.
  const HttpResponseStream = {
    from(stream: ResponseStream, prelude: Record<string, unknown>): ResponseStream {
      stream.setContentType(preludeType);
      const json = JSON.stringify(prelude);
      stream.onBeforeFirstWrite = (write) => {
        write(Buffer.from(json));
        write(new Uint8Array(8));
      };
      return stream;
    },
  };
  g.awslambda = Object.assign(g.awslambda ?? {}, {
    streamifyResponse(handler: AnyHandler & { [streamingMark]?: string }) {
      handler[streamingMark] = "response";
      return handler;
    },
    HttpResponseStream,
  });
}

/** The runtime's response stream: bytes go to `sink` as they are written, after the prelude hook. */
class ResponseStream extends Writable {
  contentType = "application/octet-stream";
  onBeforeFirstWrite: ((write: (chunk: Uint8Array) => void) => void) | undefined;
  #started = false;
  constructor(private readonly sink: (chunk: Uint8Array | null, contentType: string) => void) {
    super();
  }
  setContentType(type: string) {
    this.contentType = type;
  }
  #start() {
    if (this.#started) return;
    this.#started = true;
    this.onBeforeFirstWrite?.((c) => this.sink(c, this.contentType));
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, done: (e?: Error | null) => void) {
    this.#start();
    if (chunk.byteLength > 0) this.sink(chunk, this.contentType);
    done();
  }
  override _final(done: (e?: Error | null) => void) {
    this.#start();
    this.sink(null, this.contentType);
    done();
  }
}

/** Starts the Invoke API and every function URL on 127.0.0.1 (ephemeral ports). */
export async function startLambdaHarness(functions: LambdaFunctionSpec[]): Promise<LambdaHarness> {
  installAwsLambdaGlobal();
  const specs = new Map(functions.map((f) => [f.name, f]));
  const pools = new Map<string, Container[]>(functions.map((f) => [f.name, []]));
  const counts = new Map<string, { invocations: number; containers: number }>(
    functions.map((f) => [f.name, { invocations: 0, containers: 0 }]),
  );
  const coldStarts: ColdStart[] = [];
  const running = new Set<Promise<unknown>>();

  async function take(spec: LambdaFunctionSpec): Promise<Container> {
    const pool = pools.get(spec.name) as Container[];
    const idle = pool.find((c) => !c.busy);
    if (idle) {
      idle.busy = true;
      return idle;
    }
    const count = counts.get(spec.name) as { containers: number };
    const n = count.containers++;
    const createdAt = performance.now();
    const handler = await spec.load(n);
    const container = {
      n,
      handler,
      busy: true,
      initMs: performance.now() - createdAt,
      createdAt,
      answered: false,
    };
    pool.push(container);
    return container;
  }

  function answered(spec: LambdaFunctionSpec, c: Container) {
    if (c.answered) return;
    c.answered = true;
    coldStarts.push({
      function: spec.name,
      container: c.n,
      initMs: Math.round(c.initMs),
      firstAnswerMs: Math.round(performance.now() - c.createdAt),
    });
  }

  function context(spec: LambdaFunctionSpec, deadline: number): Context {
    const requestId = randomUUID();
    return {
      callbackWaitsForEmptyEventLoop: true,
      functionName: spec.name,
      functionVersion: "$LATEST",
      invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${spec.name}`,
      memoryLimitInMB: "512",
      awsRequestId: requestId,
      logGroupName: `/aws/lambda/${spec.name}`,
      logStreamName: `local/${requestId}`,
      getRemainingTimeInMillis: () => Math.max(0, Math.round(deadline - Date.now())),
      done: () => undefined,
      fail: () => undefined,
      succeed: () => undefined,
    };
  }

  /**
   * Runs one invocation in a container; `stream` receives a streaming handler's bytes. Resolves
   * with the result, or rejects with the error, the init failure or "Task timed out".
   */
  async function invoke(
    name: string,
    event: unknown,
    stream?: (chunk: Uint8Array | null, contentType: string) => void,
  ): Promise<{ result: unknown; streamed: boolean }> {
    const spec = specs.get(name);
    if (!spec) throw new Error(`no function ${name}`);
    (counts.get(name) as { invocations: number }).invocations++;
    const container = await take(spec);
    const deadline = Date.now() + spec.timeoutMs;
    const ctx = context(spec, deadline);
    const streaming = (container.handler as { [streamingMark]?: string })[streamingMark] === "response";
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`Task timed out after ${(spec.timeoutMs / 1000).toFixed(2)} seconds`)),
        spec.timeoutMs,
      );
    });
    try {
      if (streaming) {
        const rs = new ResponseStream((chunk, type) => {
          if (chunk && !container.answered) answered(spec, container);
          stream?.(chunk, type);
        });
        await Promise.race([Promise.resolve(container.handler(event, rs, ctx)), timedOut]);
        // The runtime ends a stream the handler left open when the handler's promise settles.
        if (!rs.writableEnded) rs.end();
        return { result: undefined, streamed: true };
      }
      const result = await Promise.race([Promise.resolve(container.handler(event, ctx)), timedOut]);
      answered(spec, container);
      return { result, streamed: false };
    } catch (err) {
      // A timed-out environment is discarded (Lambda resets it); other failures keep it.
      if (err instanceof Error && err.message.startsWith("Task timed out")) {
        const pool = pools.get(name) as Container[];
        pool.splice(pool.indexOf(container), 1);
      }
      throw err;
    } finally {
      clearTimeout(timer);
      container.busy = false;
    }
  }

  const invokeApi = createServer((req, res) => void serveInvoke(req, res));
  async function serveInvoke(req: IncomingMessage, res: ServerResponse) {
    const m = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/.exec(
      new URL(req.url ?? "/", "http://x").pathname,
    );
    const body = await readBody(req);
    const name = m
      ? decodeURIComponent(m[1] as string).replace(/^arn:aws:lambda:[^:]*:[^:]*:function:/, "")
      : "";
    if (req.method !== "POST" || !m || !specs.has(name)) {
      res.writeHead(404, {
        "content-type": "application/json",
        "x-amzn-errortype": "ResourceNotFoundException",
      });
      res.end(JSON.stringify({ Type: "User", Message: `Function not found: ${name}` }));
      return;
    }
    const event = body.byteLength > 0 ? JSON.parse(body.toString("utf8")) : {};
    const type = String(req.headers["x-amz-invocation-type"] ?? "RequestResponse");
    if (type === "DryRun") return void res.writeHead(204).end();
    if (type === "Event") {
      res.writeHead(202, { "x-amzn-requestid": randomUUID() }).end();
      const run = invoke(name, event).catch((err: unknown) =>
        console.error(`lambda-harness: ${name}: ${err}`),
      );
      running.add(run);
      void run.finally(() => running.delete(run));
      return;
    }
    try {
      const { result } = await invoke(name, event);
      res.writeHead(200, { "content-type": "application/json", "x-amz-executed-version": "$LATEST" });
      res.end(JSON.stringify(result ?? null));
    } catch (err) {
      res.writeHead(200, { "content-type": "application/json", "x-amz-function-error": "Unhandled" });
      res.end(
        JSON.stringify({
          errorType: "Error",
          errorMessage: err instanceof Error ? err.message : String(err),
        }),
      );
    }
  }

  const urlServers = new Map<string, Server>();
  for (const spec of functions.filter((f) => f.url)) {
    urlServers.set(
      spec.name,
      createServer((req, res) => void serveUrl(spec, req, res)),
    );
  }
  async function serveUrl(spec: LambdaFunctionSpec, req: IncomingMessage, res: ServerResponse) {
    const event = functionUrlEvent(req, await readBody(req), spec.name);
    const onChunk = streamedResponse(res);
    try {
      const { result, streamed } = await invoke(spec.name, event, onChunk);
      if (!streamed) writeResult(res, result);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      // What Lambda writes to the function's log for a failed invocation.
      console.error(
        `lambda-harness: ${spec.name}: ${err instanceof Error ? (err.stack ?? message) : message}`,
      );
      if (res.headersSent) res.destroy(new Error(message));
      else
        res
          .writeHead(502, { "content-type": "application/json" })
          .end(JSON.stringify({ Message: "Internal Server Error" }));
    }
  }

  const listen = (s: Server) =>
    new Promise<string>((resolve) =>
      s.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(s.address() as AddressInfo).port}`)),
    );
  const invokeEndpoint = await listen(invokeApi);
  const urls = new Map<string, string>();
  for (const [name, s] of urlServers) urls.set(name, await listen(s));

  return {
    url(name) {
      const u = urls.get(name);
      if (!u) throw new Error(`${name} has no function URL`);
      return u;
    },
    invokeEndpoint,
    stats: (name) => ({ ...(counts.get(name) as { invocations: number; containers: number }) }),
    coldStarts,
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
    async close() {
      for (const s of [invokeApi, ...urlServers.values()]) {
        s.closeAllConnections();
        await new Promise<void>((resolve) => s.close(() => resolve()));
      }
    },
  };
}
