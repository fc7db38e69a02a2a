/**
 * EDGEPILOT_MAX_RESPONSE_BYTES over the real server (`npm start`'s process, real ingest, real
 * gRPC): a small budget cuts Delta and SotW EDS answers into several responses; a SotW CDS answer
 * over it ends the stream with ResourceExhausted naming the variable and is logged; a unary
 * FetchClusters over it is refused the same way.
 */
import { toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ClusterDiscoveryService } from "../../../lib/gen/envoy/service/cluster/v3/cds_pb.ts";
import {
  DeltaDiscoveryResponseSchema,
  DiscoveryResponseSchema,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { type AdsStream, openAds } from "../support/ads-client.ts";
import { type RunningControlPlane, startControlPlane } from "../support/runtime.ts";
import { openDelta } from "./delta-client.ts";
import { apply, CDS, EDS, logged, names, node, serviceEvents } from "./mesh.ts";

const BUDGET = 4096;
const services = Array.from({ length: 40 }, (_, i) => `svc${String(i).padStart(2, "0")}`);
const clusters = services.map((s) => names(s).cluster);

let cp: RunningControlPlane;
let ads: AdsStream | undefined;

beforeAll(async () => {
  cp = await startControlPlane({ PILOT_DEBOUNCE_AFTER: "5ms", EDGEPILOT_MAX_RESPONSE_BYTES: String(BUDGET) });
  const events = services.flatMap((s, i) =>
    serviceEvents(
      s,
      Array.from({ length: 4 }, (_, j) => `10.7.${i}.${j + 1}`),
    ),
  );
  await apply(cp, events);
}, 30_000);
afterAll(async () => {
  ads?.close();
  await cp?.stop();
});

describe(`EDGEPILOT_MAX_RESPONSE_BYTES=${BUDGET}`, () => {
  it("Delta EDS for every service: several responses, each under the budget, every name once", async () => {
    const delta = openDelta(cp.xdsPort);
    try {
      delta.send({ node: node("budget-delta"), typeUrl: EDS, resourceNamesSubscribe: clusters });
      const got: string[] = [];
      const nonces = new Set<string>();
      for (let r = await delta.next(); r; r = got.length < clusters.length ? await delta.next() : undefined) {
        got.push(...r.resources.map((x) => x.name));
        nonces.add(r.nonce);
        expect(toBinary(DeltaDiscoveryResponseSchema, r).length).toBeLessThanOrEqual(BUDGET);
        delta.send({ typeUrl: EDS, responseNonce: r.nonce });
      }
      expect(got.sort()).toEqual([...clusters].sort());
      expect(nonces.size).toBeGreaterThan(1);
      expect(await delta.ended(100)).toBeUndefined();
    } finally {
      delta.close();
    }
  });

  it("SotW EDS for every service: several responses with one version_info, every name once", async () => {
    const sotw = openAds(cp.xdsPort);
    try {
      sotw.send({ node: node("budget-sotw"), typeUrl: EDS, resourceNames: clusters });
      const versions = new Set<string>();
      let count = 0;
      let responses = 0;
      for (let r = await sotw.next(); r; r = count < clusters.length ? await sotw.next() : undefined) {
        responses++;
        count += r.resources.length;
        versions.add(r.versionInfo);
        expect(toBinary(DiscoveryResponseSchema, r).length).toBeLessThanOrEqual(BUDGET);
        sotw.send({
          typeUrl: EDS,
          versionInfo: r.versionInfo,
          responseNonce: r.nonce,
          resourceNames: clusters,
        });
      }
      expect(count).toBe(clusters.length);
      expect(responses).toBeGreaterThan(1);
      expect(versions.size).toBe(1);
      expect(sotw.error()).toBe("");
    } finally {
      sotw.close();
    }
  });

  it("SotW CDS over the budget: the stream ends with ResourceExhausted naming the variable; logged", async () => {
    ads = openAds(cp.xdsPort);
    ads.send({ node: node("budget-cds"), typeUrl: CDS });
    expect(await ads.next()).toBeUndefined();
    expect(ads.error()).toMatch(
      /resource_exhausted.*Cluster answer is \d+ bytes, over EDGEPILOT_MAX_RESPONSE_BYTES=4096/,
    );
    await logged(
      cp,
      /xds: sotw Cluster answer for "sidecar~[^"]*budget-cds[^"]*" is \d+ bytes, over EDGEPILOT_MAX_RESPONSE_BYTES=4096/,
    );
  });

  it("unary FetchClusters over the budget: ResourceExhausted naming the variable", async () => {
    const cds = createClient(
      ClusterDiscoveryService,
      createGrpcTransport({ baseUrl: `http://127.0.0.1:${cp.xdsPort}` }),
    );
    const err = await cds.fetchClusters({ node: node("budget-fetch") }).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    expect(err?.code).toBe(Code.ResourceExhausted);
    expect(err?.rawMessage).toMatch(/over EDGEPILOT_MAX_RESPONSE_BYTES=4096/);
  });
});
