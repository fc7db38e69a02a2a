/**
 * The real entry files (functions/lambda/{ingest,debounce,xds}.ts, their module-load code included)
 * in the local invoke harness over DynamoDB (dynalite, started here): each container imports its
 * own instance of its entry module, the ingest function reaches the debounce function through
 * @aws-sdk/client-lambda (AWS_ENDPOINT_URL_LAMBDA points it at the harness), and the three share
 * only the table. The three parity fixtures publish the versions Node and the Worker publish; a Watch
 * hears of a push another function made (the store follower) and ends with a clean end-of-stream
 * the agent's Connect client takes as a normal end; a reconnect holding what it got is resent nothing.
 */
import { create } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openConnectUpstream } from "../../../functions/node/agent-connect-upstream.ts";
import { NodeSchema } from "../../../lib/gen/envoy/config/core/v3/base_pb.ts";
import type { DeltaDiscoveryResponse } from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { publishedStatus } from "../../../lib/resources/published-status.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { createDynamoStore } from "../../../lib/store/dynamodb.ts";
import events from "../../fixtures/parity/events.json";
import istioEvents from "../../fixtures/parity/istio-events.json";
import istioVersions from "../../fixtures/parity/istio-versions.json";
import serviceEntryEvents from "../../fixtures/parity/service-entry-events.json";
import serviceEntryVersions from "../../fixtures/parity/service-entry-versions.json";
import versions from "../../fixtures/parity/versions.json";
import { localCredentials, type RunningDynalite, startDynalite } from "../../support/dynalite.ts";
import { type LambdaHarness, startLambdaHarness } from "../../support/lambda-harness.ts";
import { ingest, ingestToken, pollClient, xdsAuth, xdsToken } from "./support.ts";

const node = {
  id: "sidecar~10.0.0.9~app-1.default~default.svc.cluster.local",
  metadata: { GENERATOR: "grpc" },
};
const xdsTimeoutMs = 3_000;

/** A Service the fixture does not have: one more Cluster when ingested. */
const extraService = {
  type: "ADDED",
  object: {
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      name: "extra",
      namespace: "default",
      resourceVersion: "90001",
      uid: "0b7e1c9a-1111-4a8e-9b7d-2f64f0d7a0c1",
    },
    spec: {
      clusterIP: "10.96.0.99",
      ports: [{ name: "grpc", port: 7000, protocol: "TCP", targetPort: 7000 }],
      selector: { app: "extra" },
    },
  },
};

describe("Lambda entry files over DynamoDB (dynalite)", () => {
  let dynalite: RunningDynalite;
  let harness: LambdaHarness;
  const saved = { ...process.env };
  beforeAll(async () => {
    dynalite = await startDynalite();
    // A module instance per container: the entry file under its own query.
    const entry = (fn: string) => async (n: number) => {
      const path = new URL(`../../../functions/lambda/${fn}.ts`, import.meta.url).pathname;
      return (await import(/* @vite-ignore */ `${path}?container=${n}`)).handler;
    };
    harness = await startLambdaHarness([
      { name: "ingest", url: true, timeoutMs: 10_000, load: entry("ingest") },
      { name: "debounce", timeoutMs: 10_000, load: entry("debounce") },
      { name: "xds", url: true, timeoutMs: xdsTimeoutMs, load: entry("xds") },
    ]);
    Object.assign(process.env, {
      AWS_REGION: "us-east-1",
      AWS_ACCESS_KEY_ID: localCredentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: localCredentials.secretAccessKey,
      DYNAMODB_ENDPOINT: dynalite.endpoint,
      DYNAMODB_TABLE: dynalite.table,
      AWS_ENDPOINT_URL_LAMBDA: harness.invokeEndpoint,
      EDGEPILOT_DEBOUNCE_FUNCTION: "debounce",
      EDGEPILOT_TOKEN: ingestToken,
      XDS_AUTH: "token",
      EDGEPILOT_XDS_TOKEN: xdsToken,
      PILOT_DEBOUNCE_AFTER: "20ms",
      EDGEPILOT_STORE_POLL_INTERVAL: "100ms",
      LOG_LEVEL: "warn",
    });
  });
  afterAll(async () => {
    await harness?.close();
    // The containers' DynamoDB clients keep their connections (Lambda freezes containers, never
    // closes them): dynalite's close would wait for them, so it is given a moment, not awaited.
    await Promise.race([dynalite?.stop(), new Promise((r) => setTimeout(r, 200))]);
    process.env = saved;
  });

  it.each([
    ["Services and endpoints", events, versions],
    ["VirtualService and DestinationRule", istioEvents, istioVersions],
    ["ServiceEntry and WorkloadEntry", serviceEntryEvents, serviceEntryVersions],
  ])("publishes the parity versions of %s, ingest invoking debounce once", async (_, batch, expected) => {
    const before = harness.stats("debounce").invocations;
    const res = await ingest(harness, batch);
    expect(res.status, await res.clone().text()).toBe(200);
    await harness.idle();
    expect(harness.stats("debounce").invocations).toBe(before + 1);
    const store = createDynamoStore({ client: dynalite.client(), table: dynalite.table });
    const status = await publishedStatus(store);
    expect(Object.fromEntries(status.types.map((t) => [t.typeUrl, t.versions]))).toEqual(expected);
    expect(status.pendingPushes).toBe(0);
  });

  it("a Watch hears a push made by the other functions, and its reconnect holding everything is resent nothing", async () => {
    const client = pollClient(harness);
    const held = new Map<string, string>();
    const watch = client
      .watch({ request: { typeUrl: TypeUrl.cluster, node } }, { headers: xdsAuth })
      [Symbol.asyncIterator]();
    const first = await watch.next();
    for (const r of (first.value as DeltaDiscoveryResponse).resources) held.set(r.name, r.version);
    expect(held.size).toBeGreaterThan(0);
    expect((await ingest(harness, [extraService])).status).toBe(200);
    const pushed = (await watch.next()).value as DeltaDiscoveryResponse;
    expect(pushed.resources.map((r) => r.name)).toEqual(["outbound|7000||extra.default.svc.cluster.local"]);
    for (const r of pushed.resources) held.set(r.name, r.version);
    // The stream then ends cleanly before the invocation's timeout.
    expect((await watch.next()).done).toBe(true);
    const again: number[] = [];
    for await (const res of client.watch(
      { request: { typeUrl: TypeUrl.cluster, node, initialResourceVersions: Object.fromEntries(held) } },
      { headers: xdsAuth },
    ))
      again.push(res.resources.length + res.removedResources.length);
    expect(again.length).toBeGreaterThan(0);
    expect(again.every((n) => n === 0)).toBe(true);
  });

  it("the agent's Connect Watch client takes the end near the timeout as a normal end (ok), not a cut", async () => {
    const ended = await new Promise<{ code: string; message: string; responses: number }>((resolve) => {
      let responses = 0;
      const upstream = openConnectUpstream(
        {
          upstream: harness.url("xds"),
          http: "1.1",
          kind: "watch",
          token: () => xdsToken,
          readMaxBytes: 4 << 20,
        },
        {
          connected: () => undefined,
          response: () => void responses++,
          ended: (code, message) => {
            upstream.close();
            resolve({ code, message, responses });
          },
        },
      );
      upstream.send({
        typeUrl: TypeUrl.cluster,
        subscribe: [],
        initialVersions: {},
        responseNonce: "",
        node: create(NodeSchema, node),
      });
    });
    expect(ended).toMatchObject({ code: "ok", message: "the upstream ended the Watch" });
    expect(ended.responses).toBeGreaterThan(0);
  });

  it("a bad variable fails the container's init naming it; its URL answers 502", async () => {
    const saved = process.env.XDS_AUTH;
    delete process.env.XDS_AUTH;
    const path = new URL("../../../functions/lambda/xds.ts", import.meta.url).pathname;
    try {
      await expect(import(/* @vite-ignore */ `${path}?container=broken`)).rejects.toThrow(
        /edgepilot: config: XDS_AUTH is not set: a Lambda function URL is reachable from anywhere/,
      );
    } finally {
      process.env.XDS_AUTH = saved;
    }
  });

  it("measured each function's cold start (init and first answer)", () => {
    for (const fn of ["ingest", "debounce", "xds"])
      expect(harness.coldStarts.some((c) => c.function === fn && c.firstAnswerMs >= c.initMs)).toBe(true);
    if (process.env.LAMBDA_COLD) console.log(JSON.stringify(harness.coldStarts));
  });
});
