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

describe("POST /v1/events refuses a bad object in the middle of a batch", () => {
  const cases: { name: string; bad: unknown; field: string }[] = [
    {
      name: "an IP that is no IP",
      bad: slice({ "endpoints[0].addresses[0]": "999.999.1.1" }),
      field: "object.endpoints[0].addresses[0]",
    },
    {
      name: "IPv6 in an IPv4 slice",
      bad: slice({ "endpoints[0].addresses[0]": "fd00::1" }),
      field: "object.endpoints[0].addresses[0]",
    },
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
    { name: "a Service without spec", bad: service({ spec: undefined }), field: "object.spec" },
    {
      name: "podIPs as a string",
      bad: pod({ "status.podIPs": "10.244.1.12" }),
      field: "object.status.podIPs",
    },
    { name: "a name with a newline", bad: pod({ "metadata.name": "a\nb" }), field: "object.metadata.name" },
  ];
  for (const c of cases) {
    it(`${c.name}: 400 with its index and field, nothing stored, one log line`, async () => {
      const { store, lines, post } = setup();
      const res = await post("/v1/events?cluster=east", [
        added(service()),
        added(slice()),
        added(c.bad),
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

  it("the same batch without the bad object applies", async () => {
    const { store, post } = setup();
    const res = await post("/v1/events?cluster=east", [added(service()), added(slice()), added(pod())]);
    expect(res.status).toBe(200);
    expect((await listAll(store, "svc/")).map((e) => e.key)).toEqual([
      "svc/bookinfo/reviews.bookinfo.svc.cluster.local/east",
    ]);
  });
});

describe("POST /v1/resync names the bad item", () => {
  it("answers 400 with items[i] and the field inside it", async () => {
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
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      index: 1,
      field: "items[1].endpoints[0].addresses[0]",
      error: expect.stringMatching(/CIDR/),
    });
    expect(await listAll(store, "")).toEqual([]);
  });
});
