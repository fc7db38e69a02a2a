/** The ingest poster against a real loopback HTTP server: paths, query parameters, headers, bodies. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createIngestPoster } from "../../../functions/node/relay/ingest-client.ts";

interface Seen {
  url: string;
  query: Record<string, string>;
  authorization: string | undefined;
  contentType: string | undefined;
  body: string;
}

let server: Server;
let base = "";
const seen: Seen[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://x");
      seen.push({
        url: req.url ?? "",
        query: Object.fromEntries(url.searchParams),
        authorization: req.headers.authorization,
        contentType: req.headers["content-type"],
        body: Buffer.concat(chunks).toString("utf8"),
      });
      res.writeHead(200, { "content-type": "application/json", "x-edgepilot-instance": "i-1" });
      res.end("{}");
    });
  });
  server.listen(0, "127.0.0.1");
  await new Promise<void>((resolve) => server.once("listening", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Port 1 on loopback: nothing listens there, the connection is refused. */
const post = createIngestPoster({
  url: "http://127.0.0.1:1",
  token: "t",
  clusterId: "east-1",
  timeoutMs: 5000,
});

describe("createIngestPoster", () => {
  it("a resync names the kind and every kind watched, in table order, commas unescaped", async () => {
    const poster = createIngestPoster({ url: base, token: "t", clusterId: "east-1" });
    const result = await poster({
      type: "resync",
      kind: "WorkloadEntry",
      body: '{"items":[]}',
      items: 0,
      watching: ["WorkloadEntry", "Pod", "Namespace", "Service", "EndpointSlice", "Node", "ServiceEntry"],
    });
    expect(result).toEqual({ status: 200, body: "{}", instance: "i-1" });
    expect(seen.at(-1)).toEqual({
      url:
        "/v1/resync?cluster=east-1&kind=WorkloadEntry" +
        "&watching=Namespace,Node,Service,EndpointSlice,Pod,ServiceEntry,WorkloadEntry",
      query: {
        cluster: "east-1",
        kind: "WorkloadEntry",
        watching: "Namespace,Node,Service,EndpointSlice,Pod,ServiceEntry,WorkloadEntry",
      },
      authorization: "Bearer t",
      contentType: "application/json",
      body: '{"items":[]}',
    });
  });

  it("a resync without a set has no watching parameter; events go to /v1/events as NDJSON", async () => {
    const poster = createIngestPoster({ url: base, token: undefined, clusterId: "c" });
    await poster({ type: "resync", kind: "Pod", body: "{}", items: 0 });
    expect(seen.at(-1)?.url).toBe("/v1/resync?cluster=c&kind=Pod");
    expect(seen.at(-1)?.authorization).toBeUndefined();
    await poster({
      type: "events",
      lines: ['{"type":"ADDED"}', '{"type":"DELETED"}'],
      kinds: ["Pod", "Pod"],
    });
    expect(seen.at(-1)).toMatchObject({
      url: "/v1/events?cluster=c",
      contentType: "application/x-ndjson",
      body: '{"type":"ADDED"}\n{"type":"DELETED"}\n',
    });
  });

  it("a network failure comes back as { error }, never thrown", async () => {
    expect(await post({ type: "resync", kind: "Pod", body: "{}", items: 0, watching: [] })).toMatchObject({
      error: expect.any(String),
    });
  });
});
