/** The ingest app in-process (hono app.request): a bad object anywhere in a batch is a 400 naming it, and nothing is written. */
import { describe, expect, it } from "vitest";
import { createIngestApp } from "../../../functions/ingest.ts";
import { defaultRegistryOptions } from "../../../lib/ingest/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { listAll } from "../../../lib/store/store.ts";
import { added, at, pod, service, slice } from "./support/valid-objects.ts";

function setup() {
  const store = createMemoryStore();
  const lines: string[] = [];
  const app = createIngestApp({
    store,
    now: () => 1_700_000_000_000,
    registry: defaultRegistryOptions,
    token: "t0ken",
    clusterId: "east",
    allowUnauthenticated: () => false,
    log: (line) => lines.push(line),
  });
  const post = (path: string, body: unknown) =>
    app.request(path, {
      method: "POST",
      headers: { authorization: "Bearer t0ken", "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  return { store, lines, post };
}

const SERVICE_NAME = at("metadata", "labels", "kubernetes.io/service-name");

describe("POST /v1/events refuses a malformed object in the middle of a batch", () => {
  // Metadata the API server never holds: the request is malformed, refused whole.
  const cases: { name: string; bad: unknown; field: string }[] = [
    {
      name: "a service-name label with '/'",
      bad: slice({ [SERVICE_NAME]: "reviews/../../default/ratings" }),
      field: 'object.metadata.labels["kubernetes.io/service-name"]',
    },
    {
      name: "a Service name with dots",
      bad: service({ "metadata.name": "reviews.prod" }),
      field: "object.metadata.name",
    },
    { name: "a name with a newline", bad: pod({ "metadata.name": "a\nb" }), field: "object.metadata.name" },
    { name: "an unknown event type", bad: { ...added(pod()), type: "PATCHED" }, field: "type" },
  ];
  for (const c of cases) {
    it(`${c.name}: 400 with its index and field, nothing stored, one log line`, async () => {
      const { store, lines, post } = setup();
      const bad = (c.bad as { type?: string }).type ? c.bad : added(c.bad);
      const res = await post("/v1/events?cluster=east", [
        added(service()),
        added(slice()),
        bad,
        added(pod()),
      ]);
      expect(res.status).toBe(400);
      const body = (await res.json()) as { error: string; index: number; field: string };
      expect({ index: body.index, field: body.field }).toEqual({ index: 2, field: c.field });
      expect(body.error.length).toBeGreaterThan(0);
      expect(await listAll(store, "")).toEqual([]);
      expect(lines).toHaveLength(1);
      expect(lines[0]).not.toMatch(/[\n\r]/);
      expect(lines[0]).toContain(`event 2, ${c.field}`);
    });
  }
});

describe("POST /v1/events skips an object its kind's rules refuse, and applies the rest", () => {
  const cases: { name: string; bad: { kind: string; metadata: { name: string } }; field: string }[] = [
    {
      name: "an IP that is no IP",
      bad: slice({ "metadata.name": "reviews-bad", "endpoints[0].addresses[0]": "999.999.1.1" }),
      field: "endpoints[0].addresses[0]",
    },
    {
      name: "IPv6 in an IPv4 slice",
      bad: slice({ "metadata.name": "reviews-bad", "endpoints[0].addresses[0]": "fd00::1" }),
      field: "endpoints[0].addresses[0]",
    },
    {
      name: "a Service without spec",
      bad: service({ "metadata.name": "ratings", spec: undefined }),
      field: "spec",
    },
    {
      name: "podIPs as a string",
      bad: pod({ "metadata.name": "reviews-bad", "status.podIPs": "10.244.1.12" }),
      field: "status.podIPs",
    },
  ];
  for (const c of cases) {
    it(`${c.name}: 200 listing it in rejected with its index and field, the rest stored, one warning`, async () => {
      const { store, lines, post } = setup();
      const res = await post("/v1/events?cluster=east", [
        added(service()),
        added(slice()),
        added(c.bad),
        added(pod()),
      ]);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { applied: number; rejected: unknown[] };
      expect(body.rejected).toEqual([
        expect.objectContaining({ index: 2, kind: c.bad.kind, name: c.bad.metadata.name, field: c.field }),
      ]);
      expect(body.applied).toBe(3);
      expect((await listAll(store, "svc/")).map((e) => e.key)).toEqual([
        "svc/bookinfo/reviews.bookinfo.svc.cluster.local/east",
      ]);
      expect((await listAll(store, "rejected/")).map((e) => e.key)).toEqual([
        `rejected/east/${c.bad.kind}/bookinfo/${c.bad.metadata.name}`,
      ]);
      const warnings = lines.filter((l) => l.includes("skipped"));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(`${c.bad.kind} bookinfo/${c.bad.metadata.name}`);
      expect(warnings[0]).toContain(c.field);
    });
  }

  it("the same refused version again is reported as repeated and not logged twice", async () => {
    const { lines, post } = setup();
    const bad = added(service({ "metadata.name": "ratings", spec: undefined }));
    await post("/v1/events?cluster=east", [bad]);
    const res = await post("/v1/events?cluster=east", [bad]);
    expect(((await res.json()) as { rejected: unknown[] }).rejected).toEqual([
      expect.objectContaining({ name: "ratings", repeated: true }),
    ]);
    expect(lines.filter((l) => l.includes("skipped"))).toHaveLength(1);
  });

  it("a DELETED whose last state its kind refuses still deletes, from what was recorded", async () => {
    const { store, post } = setup();
    expect((await post("/v1/events?cluster=east", [added(service()), added(slice())])).status).toBe(200);
    expect(await listAll(store, "eps/")).not.toEqual([]);
    const gone = { type: "DELETED", object: slice({ endpoints: {}, "metadata.resourceVersion": "101" }) };
    const res = await post("/v1/events?cluster=east", [gone]);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { applied: number }).applied).toBe(1);
    expect(await listAll(store, "eps/")).toEqual([]);
  });

  it("the same batch without the bad object applies", async () => {
    const { store, post } = setup();
    const res = await post("/v1/events?cluster=east", [added(service()), added(slice()), added(pod())]);
    expect(res.status).toBe(200);
    expect((await listAll(store, "svc/")).map((e) => e.key)).toEqual([
      "svc/bookinfo/reviews.bookinfo.svc.cluster.local/east",
    ]);
  });
});

describe("POST /v1/resync skips a refused item and keeps the rest", () => {
  it("answers 200 listing items[i] in rejected; the valid item is stored", async () => {
    const { store, post } = setup();
    const items = [
      slice(),
      slice({ "metadata.name": "reviews-2", "endpoints[0].addresses[0]": "10.0.0.0/8" }),
    ];
    const res = await post("/v1/resync?cluster=east&kind=EndpointSlice", {
      kind: "EndpointSliceList",
      metadata: { resourceVersion: "9" },
      items,
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      rejected: [
        {
          index: 1,
          kind: "EndpointSlice",
          name: "reviews-2",
          field: "endpoints[0].addresses[0]",
          message: expect.stringMatching(/CIDR/),
        },
      ],
    });
    expect((await listAll(store, "obj/east/EndpointSlice/")).map((e) => e.key)).toEqual([
      "obj/east/EndpointSlice/bookinfo/reviews-2",
      "obj/east/EndpointSlice/bookinfo/reviews-8x7kq",
    ]);
  });

  it("a list that is no list is still refused whole", async () => {
    const { store, post } = setup();
    const res = await post("/v1/resync?cluster=east&kind=EndpointSlice", { kind: "PodList", items: [] });
    expect(res.status).toBe(400);
    expect(await listAll(store, "")).toEqual([]);
  });
});
