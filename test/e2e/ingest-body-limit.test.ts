/**
 * The ingest body limit holds while the body streams: a 200 MB chunked body to each ingest path
 * over a real HTTP server is answered 413 after at most twice the limit was read, and the server's
 * memory stays far below the body's size (observed on main before: +757 MB RSS, then the 413).
 */
import { request } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIngestApp, maxBodyBytes } from "../../functions/ingest.ts";
import { defaultRegistryOptions } from "../../lib/ingest/index.ts";
import { createMemoryStore } from "../../lib/store/memory.ts";
import { listAll } from "../../lib/store/store.ts";

const store = createMemoryStore();
let server: ReturnType<typeof serve>;
let port: number;

beforeAll(async () => {
  const app = createIngestApp({
    store,
    now: () => 1_700_000_000_000,
    registry: defaultRegistryOptions,
    token: undefined,
    clusterId: "east",
    allowUnauthenticated: () => true,
    log: () => {},
  });
  server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 });
  await new Promise((resolve) => server.once("listening", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

/**
 * Streams up to `total` bytes in 64 KiB chunks (no content-length: chunked), stopping as soon as
 * the answer arrives or the server stops reading; resolves with the status and the bytes sent.
 */
function sendChunked(path: string, total: number): Promise<{ status: number; sent: number; body: string }> {
  const chunk = Buffer.alloc(64 * 1024, 0x20); // whitespace: valid JSON padding, so only size can refuse it
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = request({
      host: "127.0.0.1",
      port,
      path,
      method: "POST",
      headers: { "content-type": "application/json" },
    });
    req.on("response", (res) => {
      answered = true;
      let body = "";
      res.on("data", (d) => {
        body += d;
      });
      res.on("end", () => {
        resolve({ status: res.statusCode ?? 0, sent, body });
        req.destroy();
      });
    });
    req.on("error", (err) => {
      if (!answered) reject(err);
    });
    const pump = () => {
      while (!answered && sent < total) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      if (!answered) req.end();
    };
    req.write("[");
    pump();
  });
}

describe("ingest body limit while streaming", () => {
  for (const path of ["/v1/events", "/v1/resync?kind=Pod", "/v1/admission"]) {
    it(`refuses a 200 MB chunked body to ${path} with 413 without buffering it`, async () => {
      global.gc?.();
      const before = process.memoryUsage();
      let peakRss = before.rss;
      const sampler = setInterval(() => {
        peakRss = Math.max(peakRss, process.memoryUsage().rss);
      }, 5);
      const result = await sendChunked(path, 200 * 1024 * 1024);
      clearInterval(sampler);
      console.log(
        `${path}: 413 after ${(result.sent / 2 ** 20).toFixed(0)} MiB sent, peak RSS +${((peakRss - before.rss) / 2 ** 20).toFixed(0)} MiB`,
      );
      expect(result.status).toBe(413);
      expect(JSON.parse(result.body)).toEqual({ error: `body over ${maxBodyBytes} bytes` });
      // Read no further than twice the limit (plus what the socket buffers) before the answer.
      expect(result.sent).toBeLessThan(3 * maxBodyBytes);
      // At most the limit is kept; the 200 MB never is. RSS is the process's (client included).
      expect(peakRss - before.rss).toBeLessThan(150 * 1024 * 1024);
      expect(await listAll(store, "")).toEqual([]);
    });
  }
});
