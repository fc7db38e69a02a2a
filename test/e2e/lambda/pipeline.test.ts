/**
 * The AWS host through the local invoke harness: ingest (function URL) ▶ debounce (invoked by
 * ingest through @aws-sdk/client-lambda, InvocationType Event) ▶ Poll and Watch answers on the xDS
 * function (function URL, response streaming), the three sharing only the store. The parity
 * fixture publishes the versions Node and the Worker publish; a Watch ends cleanly before the
 * invocation's timeout and a reconnect holding what it got is resent nothing; reads without
 * credentials are refused.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publishedStatus } from "../../../lib/resources/published-status.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import events from "../../fixtures/parity/events.json";
import versions from "../../fixtures/parity/versions.json";
import type { LambdaHarness } from "../../support/lambda-harness.ts";
import { ingest, lambdaTestConfig, pollClient, startFunctions, xdsAuth } from "./support.ts";

const node = {
  id: "sidecar~10.0.0.9~app-1.default~default.svc.cluster.local",
  metadata: { GENERATOR: "grpc" },
};
const clusters = versions[TypeUrl.cluster as keyof typeof versions] as Record<string, string>;
const assignments = versions[TypeUrl.endpoint as keyof typeof versions] as Record<string, string>;

describe("Lambda host over a shared store (memory)", () => {
  const store = createMemoryStore();
  const lines: string[] = [];
  let harness: LambdaHarness;
  beforeAll(async () => {
    harness = await startFunctions(store, { lines });
  });
  afterAll(async () => {
    if (process.env.LAMBDA_LINES) console.log(lines.join("\n"));
    await harness.close();
  });

  it("ingest applies the batch and invokes the debounce function once, which publishes the parity versions", async () => {
    const res = await ingest(harness, events);
    expect(res.status, await res.clone().text()).toBe(200);
    await harness.idle();
    expect(harness.stats("debounce").invocations).toBe(1);
    const status = await publishedStatus(store);
    expect(Object.fromEntries(status.types.map((t) => [t.typeUrl, t.versions]))).toEqual(versions);
    expect(status).toMatchObject({ pushVersion: 1, pendingPushes: 0 });
  });

  it("Poll on the xDS function answers the published versions", async () => {
    const client = pollClient(harness);
    const cds = await client.poll({ request: { typeUrl: TypeUrl.cluster, node } }, { headers: xdsAuth });
    expect(Object.fromEntries(cds.resources.map((r) => [r.name, r.version]))).toEqual(clusters);
    const eds = await client.poll(
      { request: { typeUrl: TypeUrl.endpoint, node, resourceNamesSubscribe: Object.keys(assignments) } },
      { headers: xdsAuth },
    );
    expect(Object.fromEntries(eds.resources.map((r) => [r.name, r.version]))).toEqual(assignments);
  });

  it("a Watch holding everything is resent nothing and ends cleanly before the invocation's timeout", async () => {
    const client = pollClient(harness);
    const started = Date.now();
    const got: number[] = [];
    for await (const res of client.watch(
      { request: { typeUrl: TypeUrl.cluster, node, initialResourceVersions: clusters } },
      { headers: xdsAuth },
    ))
      got.push(res.resources.length + res.removedResources.length);
    const lived = Date.now() - started;
    // The xDS function's timeout is 2.5 s; the stream ends with its end-of-stream message 1 s before.
    expect(lived).toBeGreaterThan(1_000);
    expect(lived).toBeLessThan(2_500);
    expect(got.every((n) => n === 0)).toBe(true);
  });

  it("a long poll with nothing new answers within the invocation's time, not at its wait", async () => {
    const client = pollClient(harness);
    const started = Date.now();
    const res = await client.poll(
      {
        request: { typeUrl: TypeUrl.cluster, node, initialResourceVersions: clusters },
        wait: { seconds: 60n },
      },
      { headers: xdsAuth },
    );
    expect(res.resources).toEqual([]);
    expect(Date.now() - started).toBeLessThan(2_500);
  });

  it("refuses reads without credentials: Poll Unauthenticated, REST 401", async () => {
    const client = pollClient(harness);
    const err = await client.poll({ request: { typeUrl: TypeUrl.cluster, node } }).catch((e: unknown) => e);
    expect(ConnectError.from(err).code).toBe(Code.Unauthenticated);
    const rest = await fetch(`${harness.url("xds")}/v3/discovery:clusters`, {
      method: "POST",
      body: JSON.stringify({ node }),
    });
    expect(rest.status).toBe(401);
  });

  it("two batches at once: one debounce invocation each, both published, nothing left queued", async () => {
    const service = (name: string, rv: string) => ({
      type: "ADDED",
      object: {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name, namespace: "default", resourceVersion: rv },
        spec: { clusterIP: "10.96.0.77", ports: [{ name: "grpc", port: 7000, protocol: "TCP" }] },
      },
    });
    const before = harness.stats("debounce").invocations;
    const answers = await Promise.all([
      ingest(harness, [service("one", "90001")]),
      ingest(harness, [service("two", "90002")]),
    ]);
    expect(answers.map((r) => r.status)).toEqual([200, 200]);
    await harness.idle();
    expect(harness.stats("debounce").invocations).toBe(before + 2);
    const status = await publishedStatus(store);
    const names = Object.keys(status.types.find((t) => t.typeUrl === TypeUrl.cluster)?.versions ?? {});
    expect(names).toEqual(
      expect.arrayContaining([
        "outbound|7000||one.default.svc.cluster.local",
        "outbound|7000||two.default.svc.cluster.local",
      ]),
    );
    expect(status.pendingPushes).toBe(0);
  });

  it("refuses ingest without the token, and invokes nothing", async () => {
    const before = harness.stats("debounce").invocations;
    expect((await ingest(harness, events, null)).status).toBe(401);
    expect((await ingest(harness, events, "wrong")).status).toBe(401);
    expect(harness.stats("debounce").invocations).toBe(before);
  });
});

describe("Lambda xDS function with a bad XDS_JWKS", () => {
  it("answers every call 500 naming the variable, and logs it once", async () => {
    const lines: string[] = [];
    const config = lambdaTestConfig({
      XDS_AUTH: "jwt",
      XDS_JWT_ISSUER: "https://issuer.example",
      XDS_JWT_AUDIENCE: "edgepilot",
      XDS_JWKS: "{not json",
    });
    const harness = await startFunctions(createMemoryStore(), { config, lines });
    try {
      for (let i = 0; i < 2; i++) {
        const res = await fetch(`${harness.url("xds")}/ready`);
        expect(res.status).toBe(500);
        expect(((await res.json()) as { error: string }).error).toMatch(/^edgepilot: config: XDS_JWKS: /);
      }
      expect(lines.filter((l) => l.startsWith("edgepilot: config: XDS_JWKS"))).toHaveLength(1);
    } finally {
      await harness.close();
    }
  });
});
