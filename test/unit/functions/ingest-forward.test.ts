/**
 * The Worker's ingest forward (functions/workers/ingest-forward.ts), on Node with a recording
 * forward: what reaches the MeshStore (one request: path, query string, content type and body kept,
 * the token dropped, the Worker's identity set over any a client sent), what never does (a refused
 * call), and what a failing object answers. The real path on workerd: test/workers/do-calls.test.ts.
 */
import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { describe, expect, it } from "vitest";
import {
  forwardedIngest,
  forwardFailure,
  mountIngestForward,
} from "../../../functions/workers/ingest-forward.ts";

function setup(answer: (request: Request) => Promise<Response>) {
  const seen: { url: string; headers: Headers; body: string }[] = [];
  const lines: string[] = [];
  const app = new Hono();
  mountIngestForward(
    app,
    { token: "t", allowUnauthenticated: () => false },
    async (request) => {
      seen.push({ url: request.url, headers: request.headers, body: await request.text() });
      return answer(request);
    },
    (line) => lines.push(line),
  );
  app.onError((err, c) =>
    err instanceof HTTPException ? c.json({ error: err.message }, err.status) : c.json({}, 500),
  );
  return { app, seen, lines };
}

const ok = async () => Response.json({ applied: 1 }, { headers: { "x-edgepilot-instance": "i-1" } });

describe("mountIngestForward", () => {
  for (const path of [
    "/v1/events?cluster=east",
    "/v1/resync?kind=Service&cluster=east",
    "/v1/admission",
    "/v1/admission/east",
  ]) {
    it(`${path}: one forward with the query, content type and body; the object's answer as is`, async () => {
      const { app, seen } = setup(ok);
      const res = await app.request(path, {
        method: "POST",
        headers: {
          authorization: "Bearer t",
          "content-type": "application/x-ndjson",
          "x-edgepilot-identity": '{"method":"none","subject":"forged"}',
        },
        body: '{"a":1}\n{"b":2}',
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-edgepilot-instance")).toBe("i-1");
      expect(await res.json()).toEqual({ applied: 1 });
      expect(seen).toHaveLength(1);
      const [call] = seen;
      expect(new URL(call!.url).pathname + new URL(call!.url).search).toBe(path);
      expect(call!.body).toBe('{"a":1}\n{"b":2}');
      expect(call!.headers.get("content-type")).toBe("application/x-ndjson");
      expect(call!.headers.get("authorization")).toBeNull();
      expect(forwardedIngest(call!.headers)).toBe(true);
      expect(call!.headers.get("x-edgepilot-identity")).not.toContain("forged");
    });
  }

  it("GET /v1/gateway-status: forwarded with its query and If-None-Match, no body; the object's 304 as is", async () => {
    const { app, seen } = setup(async () => new Response(null, { status: 304, headers: { etag: '"e1"' } }));
    const res = await app.request("/v1/gateway-status?cluster=east", {
      headers: { authorization: "Bearer t", "if-none-match": '"e1"' },
    });
    expect(res.status).toBe(304);
    expect(res.headers.get("etag")).toBe('"e1"');
    expect(seen).toHaveLength(1);
    expect(new URL(seen[0]!.url).search).toBe("?cluster=east");
    expect(seen[0]!.body).toBe("");
    expect(seen[0]!.headers.get("if-none-match")).toBe('"e1"');
    expect(seen[0]!.headers.get("authorization")).toBeNull();
    expect(forwardedIngest(seen[0]!.headers)).toBe(true);
    expect((await app.request("/v1/gateway-status")).status).toBe(401);
    expect(seen).toHaveLength(1);
  });

  const refused: [string, Record<string, string>, string][] = [
    ["no token", {}, "missing bearer token"],
    ["a wrong token", { authorization: "Bearer u" }, "wrong bearer token"],
  ];
  for (const [name, headers, error] of refused) {
    it(`${name}: 401, and nothing is forwarded`, async () => {
      const { app, seen } = setup(ok);
      const res = await app.request("/v1/events", { method: "POST", headers, body: "[]" });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error });
      expect(seen).toHaveLength(0);
    });
  }

  it("an object that throws: 500 saying the call may or may not have been applied, logged", async () => {
    const { app, lines } = setup(() =>
      Promise.reject(new Error("Durable Object reset because its code was updated")),
    );
    const res = await app.request("/v1/events", {
      method: "POST",
      headers: { authorization: "Bearer t" },
      body: "[]",
    });
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: forwardFailure });
    expect(lines).toEqual([
      'ingest: the Durable Object failed on /v1/events: "Error: Durable Object reset because its code was updated"',
    ]);
  });

  it("a body past the ingest limit reaches the object cut one byte past it (the object answers 413)", async () => {
    const { app, seen } = setup(ok);
    const big = new Uint8Array(32 * 1024 * 1024 + 10).fill(0x20);
    await app.request("/v1/events", { method: "POST", headers: { authorization: "Bearer t" }, body: big });
    expect(seen[0]!.body.length).toBe(32 * 1024 * 1024 + 1);
  });
});

describe("forwardedIngest", () => {
  const cases: [string, string | undefined, boolean][] = [
    ["the Worker's ingest identity", '{"method":"token","subject":"EDGEPILOT_TOKEN"}', true],
    ["no header", undefined, false],
    ["an xDS identity (Poll/Watch)", '{"method":"token","subject":"EDGEPILOT_XDS_TOKEN"}', false],
    ["not JSON", "{", false],
    ["null", "null", false],
  ];
  for (const [name, value, want] of cases) {
    it(`${name} ▶ ${want}`, () => {
      const headers = new Headers(value === undefined ? {} : { "x-edgepilot-identity": value });
      expect(forwardedIngest(headers)).toBe(want);
    });
  }
});
