import { describe, expect, it } from "vitest";
import { decodeEventsBody, validateEvents } from "../../../lib/ingest/index.ts";
import { kindHandlers } from "../../../lib/ingest/kinds/index.ts";

const service = (o: Record<string, unknown> = {}) => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "reviews", namespace: "default", resourceVersion: "1" },
  spec: { clusterIP: "10.0.0.1", ports: [{ name: "grpc", port: 9080, protocol: "TCP" }] },
  ...o,
});
const ev = (object: unknown, type = "ADDED") => ({ type, object });

describe("decodeEventsBody", () => {
  it("takes one event, an array, or NDJSON", async () => {
    expect(await decodeEventsBody(JSON.stringify(ev(service())), "application/json")).toMatchObject({
      ok: true,
    });
    const arr = await decodeEventsBody(JSON.stringify([ev(service()), ev(service())]), undefined);
    expect(arr.ok && arr.value.length).toBe(2);
    const nd = await decodeEventsBody(
      `${JSON.stringify(ev(service()))}\n\n${JSON.stringify(ev(service()))}\n`,
      "application/x-ndjson",
    );
    expect(nd.ok && nd.value.length).toBe(2);
  });
  it("names the NDJSON event that is malformed", async () => {
    const r = await decodeEventsBody(
      `${JSON.stringify(ev(service()))}\n{oops`,
      "application/x-ndjson; charset=utf-8",
    );
    expect(r).toMatchObject({ ok: false, error: { index: 1 } });
    expect(!r.ok && r.error.message).toMatch(/malformed JSON on line 2/);
  });
  it("reads NDJSON lines cut across the pieces a body arrives in, numbering lines as in one text", async () => {
    const good = [JSON.stringify(ev(service())), "", JSON.stringify(ev(service(), "DELETED")), "[1]"];
    const bad = [...good.slice(0, 3), "{oops", "[1]"];
    const cut = (lines: string[], size: number) => {
      const text = `${lines.join("\r\n")}\n`;
      return Array.from({ length: Math.ceil(text.length / size) }, (_, i) =>
        text.slice(i * size, (i + 1) * size),
      );
    };
    for (let size = 1; size <= 200; size += 7) {
      expect(await decodeEventsBody(cut(good, size), "application/x-ndjson")).toMatchObject({
        ok: true,
        value: [{ type: "ADDED" }, { type: "DELETED" }, [1]],
      });
      expect(await decodeEventsBody(cut(bad, size), "application/x-ndjson")).toMatchObject({
        ok: false,
        error: { index: 2, message: /malformed JSON on line 4/ },
      });
    }
  });
  it("rejects malformed JSON", async () => {
    expect(await decodeEventsBody("{", "application/json")).toMatchObject({
      ok: false,
      error: { message: /malformed JSON/ },
    });
  });
});

describe("validateEvents", () => {
  const bad: { name: string; events: unknown[]; index: number; field: string; message: RegExp }[] = [
    {
      name: "unknown event type",
      events: [ev(service()), ev(service(), "UPSERT")],
      index: 1,
      field: "type",
      message: /unknown event type "UPSERT"/,
    },
    {
      name: "object missing",
      events: [{ type: "ADDED" }],
      index: 0,
      field: "object",
      message: /must be an object/,
    },
    {
      name: "no kind",
      events: [ev(service({ kind: undefined }))],
      index: 0,
      field: "object.kind",
      message: /required/,
    },
    {
      name: "no name",
      events: [ev(service()), ev(service()), ev(service({ metadata: { namespace: "default" } }))],
      index: 2,
      field: "object.metadata.name",
      message: /required/,
    },
    {
      name: "namespaced kind without namespace",
      events: [ev(service({ metadata: { name: "x" } }))],
      index: 0,
      field: "object.metadata.namespace",
      message: /required for a Service/,
    },
    {
      name: "name with a slash",
      events: [ev(service({ metadata: { name: "a/b", namespace: "default" } }))],
      index: 0,
      field: "object.metadata.name",
      message: /RFC 1035 label/,
    },
    {
      name: "bad port",
      events: [ev(service({ spec: { ports: [{ port: 0 }] } }))],
      index: 0,
      field: "object.spec.ports[0].port",
      message: /port number/,
    },
    {
      name: "wrong apiVersion",
      events: [
        ev({
          ...service(),
          kind: "EndpointSlice",
          apiVersion: "discovery.k8s.io/v1beta1",
          addressType: "IPv4",
        }),
      ],
      index: 0,
      field: "object.apiVersion",
      message: /want discovery.k8s.io\/v1/,
    },
    {
      name: "slice endpoint without addresses",
      events: [
        ev({
          apiVersion: "discovery.k8s.io/v1",
          kind: "EndpointSlice",
          metadata: { name: "s", namespace: "default" },
          addressType: "IPv4",
          endpoints: [{ conditions: { ready: true } }],
        }),
      ],
      index: 0,
      field: "object.endpoints[0].addresses",
      message: /required/,
    },
    {
      name: "a kind that is no kind name",
      events: [ev(service({ kind: "Service/../Pod" }))],
      index: 0,
      field: "object.kind",
      message: /not a kind name/,
    },
    {
      name: "labels that are not strings",
      events: [ev(service({ metadata: { name: "r", namespace: "d", labels: { app: 1 } } }))],
      index: 0,
      field: "object.metadata.labels.app",
      message: /must be a string/,
    },
  ];
  for (const c of bad) {
    it(`rejects: ${c.name}`, () => {
      const r = validateEvents(c.events);
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.error).toMatchObject({ index: c.index, field: c.field });
        expect(r.error.message).toMatch(c.message);
      }
    });
  }

  it("accepts cluster-scoped kinds without a namespace, BOOKMARKs, and unknown kinds", () => {
    const r = validateEvents([
      ev({ apiVersion: "v1", kind: "Node", metadata: { name: "node-1" } }),
      { type: "BOOKMARK", object: { kind: "Service", metadata: { resourceVersion: "42" } } },
      ev({ apiVersion: "example.com/v1", kind: "Widget", metadata: { name: "w", namespace: "default" } }),
      ev(service(), "DELETED"),
    ]);
    expect(r.ok).toBe(true);
    expect(r.ok && r.value.map((e) => e.type)).toEqual(["ADDED", "BOOKMARK", "ADDED", "DELETED"]);
    expect(r.ok && r.value[1]).toEqual({ type: "BOOKMARK", resourceVersion: "42" });
  });
});

describe("kinds named after Object.prototype members", () => {
  it("are refused: a kind is CamelCase", () => {
    for (const kind of ["constructor", "toString", "hasOwnProperty", "__proto__"]) {
      const r = validateEvents([
        ev({ apiVersion: "example.com/v1", kind, metadata: { name: "x", namespace: "d" } }),
      ]);
      expect(r.ok ? "ok" : r.error).toMatchObject({ field: "object.kind", message: /not a kind name/ });
    }
  });
  it("find no handler even if one got through", () => {
    for (const kind of ["constructor", "toString", "__proto__"]) expect(kindHandlers[kind]).toBeUndefined();
  });
});
