/** The ingest contract over real HTTP against the real Node runtime: bad input changes nothing. */
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StatusService } from "../../lib/gen/edgepilot/v1/status_pb.ts";
import { AggregatedDiscoveryService } from "../../lib/gen/envoy/service/discovery/v3/ads_pb.ts";
import { DiscoveryRequestSchema } from "../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { destinationRule, virtualService } from "../unit/ingest/support/istio.ts";
import { endpointSlice, event, service } from "./support/kube.ts";
import { type RunningControlPlane, startControlPlane } from "./support/runtime.ts";

let cp: RunningControlPlane;
const status = () =>
  createClient(StatusService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${cp.xdsPort}` })).getStatus(
    {},
  );

async function settled() {
  for (let i = 0; i < 100; i++) {
    const s = await status();
    if (s.pendingPushes === 0) return s;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("queue never drained");
}

beforeAll(async () => {
  cp = await startControlPlane({ PILOT_DEBOUNCE_AFTER: "10ms" });
  const res = await cp.post([
    event("ADDED", service("reviews", "default", [{ name: "grpc", port: 9080 }])),
    event(
      "ADDED",
      endpointSlice("reviews-1", "reviews", "default", { name: "grpc", port: 9080 }, [
        { ip: "10.1.0.1", ready: true },
      ]),
    ),
  ]);
  expect(res.status).toBe(200);
  const s = await settled();
  expect(s.pushVersion).toBe(1n);
});
afterAll(async () => {
  await cp?.stop();
});

describe("ingest rejects bad input and applies none of it", () => {
  const good = event(
    "MODIFIED",
    endpointSlice("reviews-1", "reviews", "default", { name: "grpc", port: 9080 }, [
      { ip: "10.9.9.9", ready: true },
    ]),
  );
  const cases: {
    name: string;
    init: Parameters<RunningControlPlane["post"]>[1];
    body?: unknown;
    status: number;
    want: Record<string, unknown>;
  }[] = [
    {
      name: "malformed JSON",
      init: { raw: `[${JSON.stringify(good)}, {"type": "ADDED", ` },
      status: 400,
      want: { error: expect.stringMatching(/malformed JSON/) },
    },
    {
      name: "malformed NDJSON line",
      init: { raw: `${JSON.stringify(good)}\n{nope}\n`, contentType: "application/x-ndjson" },
      status: 400,
      want: { index: 1, error: expect.stringMatching(/line 2/) },
    },
    {
      name: "unknown event type after a good event",
      init: {},
      body: [good, { type: "UPSERTED", object: good.object }],
      status: 400,
      want: { index: 1, field: "type" },
    },
    {
      name: "object without a name",
      init: {},
      body: [
        good,
        good,
        { type: "ADDED", object: { apiVersion: "v1", kind: "Service", metadata: { namespace: "default" } } },
      ],
      status: 400,
      want: { index: 2, field: "object.metadata.name", error: "is required" },
    },
    {
      name: "missing token",
      init: { token: null },
      body: [good],
      status: 401,
      want: { error: "missing bearer token" },
    },
    {
      name: "wrong token",
      init: { token: "guess" },
      body: [good],
      status: 401,
      want: { error: "wrong bearer token" },
    },
  ];
  for (const c of cases) {
    it(`${c.name} ▶ ${c.status}`, async () => {
      const before = await status();
      const res = await cp.post(c.body, c.init);
      expect(res.status).toBe(c.status);
      expect(await res.json()).toMatchObject(c.want);
      const after = await status();
      expect(after.pendingPushes).toBe(0);
      expect(after.pushVersion).toBe(before.pushVersion);
      expect(after.types).toEqual(before.types);
    });
  }

  // Objects the API server holds are facts about the cluster: one Istio's rules refuse is skipped
  // and reported, the rest of its batch applies, and nothing refused reaches a proxy.
  const refused: { name: string; body: unknown[]; rejected: { index: number; field: string } }[] = [
    {
      name: "a VirtualService with a negative weight after a good event",
      body: [
        good,
        event(
          "ADDED",
          virtualService("reviews", {
            http: [{ route: [{ destination: { host: "reviews", subset: "v1" }, weight: -1 }] }],
          }),
        ),
      ],
      rejected: { index: 1, field: "spec.http[0].route[0].weight" },
    },
    {
      name: "a VirtualService whose regex does not compile",
      body: [
        event(
          "ADDED",
          virtualService("reviews", {
            http: [{ match: [{ uri: { regex: "a(b" } }], route: [{ destination: { host: "reviews" } }] }],
          }),
        ),
      ],
      rejected: { index: 0, field: "spec.http[0].match[0].uri.regex" },
    },
    {
      name: "a DestinationRule with a duplicate subset name",
      body: [
        good,
        event(
          "ADDED",
          destinationRule("reviews", [
            { name: "v1", labels: { version: "v1" } },
            { name: "v1", labels: { version: "v2" } },
          ]),
        ),
      ],
      rejected: { index: 1, field: "spec.subsets[1].name" },
    },
  ];
  for (const c of refused) {
    it(`${c.name} ▶ 200, skipped and reported, nothing of it pushed`, async () => {
      const before = await status();
      const res = await cp.post(c.body);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { rejected: unknown[] }).rejected).toEqual([
        expect.objectContaining(c.rejected),
      ]);
      const after = await status();
      expect(after.pendingPushes).toBe(0);
      expect(after.types).toEqual(before.types);
    });
  }

  it("a bad cluster id ▶ 400", async () => {
    const res = await fetch(`http://127.0.0.1:${cp.port}/v1/events?cluster=a/b`, {
      method: "POST",
      headers: { authorization: `Bearer ${cp.token}` },
      body: "[]",
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/cluster "a\/b"/);
  });
});

describe("admission webhook", () => {
  const call = (path: string, body: unknown) =>
    fetch(`http://127.0.0.1:${cp.port}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${cp.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const review = (operation: string, object: unknown, o: Record<string, unknown> = {}) => ({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: { uid: `uid-${operation}-${Math.random()}`, operation, object, ...o },
  });
  const ratings = service("ratings", "default", [{ name: "grpc", port: 7070 }]);

  it("allows, echoes the uid, and applies the change", async () => {
    const before = await settled();
    const body = review("CREATE", ratings);
    const res = await call("/v1/admission?cluster=Kubernetes", body);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid: body.request.uid, allowed: true },
    });
    const after = await settled();
    expect(after.pushVersion).toBe(before.pushVersion + 1n);
    const listeners = after.types.find((t) => t.typeUrl.endsWith("Listener"))?.versions ?? {};
    expect(Object.keys(listeners)).toContain("ratings.default.svc.cluster.local:7070");
  });

  it("/v1/admission/<cluster>: the cluster in the path (clientConfig.url takes no query)", async () => {
    const before = await settled();
    const body = review("CREATE", service("path-cluster", "default", [{ name: "grpc", port: 7071 }]));
    const res = await call("/v1/admission/Kubernetes", body);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { response: { uid: string } }).response.uid).toBe(body.request.uid);
    const after = await settled();
    expect(after.pushVersion).toBe(before.pushVersion + 1n);
  });

  const badPaths: [string, string, RegExp][] = [
    ["an invalid cluster id in the path", "/v1/admission/bad%20id", /cluster "bad id": /],
    [
      "path and query that differ",
      "/v1/admission/east?cluster=west",
      /"east" in the path and "west" in the query differ/,
    ],
  ];
  for (const [name, path, error] of badPaths) {
    it(`${name} ▶ 400, nothing applied`, async () => {
      const before = await settled();
      const res = await call(
        path,
        review("CREATE", service("never", "default", [{ name: "grpc", port: 1 }])),
      );
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(error);
      expect(await settled()).toEqual(before);
    });
  }

  it("a dry run is allowed and changes nothing", async () => {
    const before = await settled();
    const res = await call("/v1/admission", review("DELETE", null, { oldObject: ratings, dryRun: true }));
    expect(((await res.json()) as { response: { allowed: boolean } }).response.allowed).toBe(true);
    expect(await settled()).toEqual(before);
  });

  it("a body that is no AdmissionReview ▶ 400", async () => {
    const res = await call("/v1/admission", { kind: "Pod" });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ field: "apiVersion" });
  });

  it("a resync of an unknown kind ▶ 400 naming the kinds it takes", async () => {
    const res = await call("/v1/resync?kind=Widget", { items: [] });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(
      /cannot resync kind "Widget"; want one of .*Service, EndpointSlice/,
    );
  });
});

describe("shutdown", () => {
  it("SIGTERM ends open ADS streams and exits 0", async () => {
    const ads = createClient(
      AggregatedDiscoveryService,
      createGrpcTransport({ baseUrl: `http://127.0.0.1:${cp.xdsPort}` }),
    );
    async function* requests() {
      yield create(DiscoveryRequestSchema, {
        typeUrl: "type.googleapis.com/envoy.config.cluster.v3.Cluster",
        node: {
          id: "sidecar~10.0.0.1~probe.default~default.svc.cluster.local",
          metadata: { GENERATOR: "grpc" },
        },
      });
      await new Promise(() => {}); // keep the request side open, as a proxy does
    }
    const responses: string[] = [];
    const stream = (async () => {
      for await (const r of ads.streamAggregatedResources(requests())) responses.push(r.typeUrl);
    })();
    for (let i = 0; i < 100 && responses.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(responses).toEqual(["type.googleapis.com/envoy.config.cluster.v3.Cluster"]);
    const code = await cp.stop("SIGTERM");
    expect(code).toBe(0);
    await expect(stream).resolves.toBeUndefined();
    expect(cp.output()).toMatch(/SIGTERM: draining streams and stopping/);
  });
});
