/** SotW ADS over the real server with a raw gRPC client: nonces, ACK, NACK, pushes on change. */
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StatusService } from "../../lib/gen/edgepilot/v1/status_pb.ts";
import { type AdsStream, openAds } from "./support/ads-client.ts";
import { endpointSlice, event, pod, service } from "./support/kube.ts";
import { type RunningControlPlane, startControlPlane } from "./support/runtime.ts";

const CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
const EDS = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
const cluster = "outbound|9080||reviews.default.svc.cluster.local";
const node = {
  id: "sidecar~10.0.0.5~conformance.default~default.svc.cluster.local",
  metadata: { GENERATOR: "grpc" },
};
const port = { name: "grpc", port: 9080 };

let cp: RunningControlPlane;
let ads: AdsStream;
const slice = (ip: string) =>
  event("MODIFIED", endpointSlice("reviews-1", "reviews", "default", port, [{ ip, ready: true }]));

async function pushed(version: bigint) {
  const status = createClient(
    StatusService,
    createGrpcTransport({ baseUrl: `http://127.0.0.1:${cp.xdsPort}` }),
  );
  for (let i = 0; i < 200; i++) {
    if ((await status.getStatus({})).pushVersion >= version) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`push ${version} never happened`);
}

beforeAll(async () => {
  cp = await startControlPlane({ PILOT_DEBOUNCE_AFTER: "5ms" });
  const pods = ["10.1.0.1", "10.1.0.2"].map((ip) => event("ADDED", pod("reviews", "default", ip)));
  await cp.post([...pods, event("ADDED", service("reviews", "default", [port])), slice("10.1.0.1")]);
  await pushed(1n);
  ads = openAds(cp.xdsPort);
});
afterAll(async () => {
  ads?.close();
  await cp?.stop();
});

describe("SotW ADS", () => {
  let cdsNonce = "";
  let edsNonce = "";
  let edsVersion = "";

  it("answers the first request of a type, even a wildcard", async () => {
    ads.send({ node, typeUrl: CDS });
    const r = await ads.next();
    expect(r?.typeUrl).toBe(CDS);
    expect(r?.resources.map((a) => a.typeUrl)).toEqual([CDS]);
    cdsNonce = r?.nonce ?? "";
    ads.send({ typeUrl: CDS, versionInfo: r?.versionInfo, responseNonce: cdsNonce });
    ads.send({ typeUrl: EDS, resourceNames: [cluster, "outbound|1||not-yet.default.svc.cluster.local"] });
    const e = await ads.next();
    expect(e?.typeUrl).toBe(EDS);
    expect(e?.resources).toHaveLength(1);
    edsNonce = e?.nonce ?? "";
    edsVersion = e?.versionInfo ?? "";
  });

  it("answers nothing to an ACK", async () => {
    ads.send({
      typeUrl: EDS,
      versionInfo: edsVersion,
      resourceNames: [cluster, "outbound|1||not-yet.default.svc.cluster.local"],
      responseNonce: edsNonce,
    });
    expect(await ads.next(300)).toBeUndefined();
  });

  it("pushes only the changed type when an endpoint moves", async () => {
    await cp.post([slice("10.1.0.2")]);
    const r = await ads.next();
    expect(r?.typeUrl).toBe(EDS);
    expect(r?.versionInfo).not.toBe(edsVersion);
    expect(await ads.next(300)).toBeUndefined(); // no CDS: clusters did not change
    edsNonce = r?.nonce ?? "";
  });

  it("ignores a stale nonce and records a NACK without resending", async () => {
    ads.send({
      typeUrl: EDS,
      versionInfo: edsVersion,
      responseNonce: "stale-nonce",
      errorDetail: { code: 3, message: "stale" },
    });
    expect(await ads.next(300)).toBeUndefined();
    ads.send({
      typeUrl: EDS,
      versionInfo: edsVersion,
      resourceNames: [cluster, "outbound|1||not-yet.default.svc.cluster.local"],
      responseNonce: edsNonce,
      errorDetail: { code: 3, message: "endpoint 10.1.0.2 rejected by test" },
    });
    expect(await ads.next(300)).toBeUndefined();
    for (let i = 0; i < 50 && !cp.output().includes("rejected by test"); i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(cp.output()).toMatch(
      /conformance\.default.*" NACKed ".*ClusterLoadAssignment" \(kept "[0-9a-f]+"\): "endpoint 10\.1\.0\.2 rejected by test"/,
    );
  });

  it("sends a name asked for before it existed once it appears", async () => {
    await cp.post([
      event("ADDED", pod("not-yet", "default", "10.2.0.1")),
      event("ADDED", service("not-yet", "default", [{ name: "grpc", port: 1 }])),
      event(
        "ADDED",
        endpointSlice("not-yet-1", "not-yet", "default", { name: "grpc", port: 1 }, [
          { ip: "10.2.0.1", ready: true },
        ]),
      ),
    ]);
    const seen: string[] = [];
    for (let r = await ads.next(); r; r = await ads.next(300)) {
      seen.push(r.typeUrl);
      // EDS is not state-of-the-world: the push carries the assignment that appeared, not the unchanged one.
      if (r.typeUrl === EDS) expect(r.resources).toHaveLength(1);
    }
    expect(seen).toEqual([CDS, EDS]); // make before break: clusters first
  });
});

describe("SotW limits", () => {
  it("a request naming too many resources ends only its own stream", async () => {
    const greedy = openAds(cp.xdsPort);
    greedy.send({ node, typeUrl: EDS, resourceNames: Array.from({ length: 10_001 }, (_, i) => `n${i}`) });
    expect(await greedy.next(500)).toBeUndefined();
    expect(greedy.error()).toMatch(
      /10001 resource_names .* at most 10000 per request \(EDGEPILOT_MAX_NAMES_PER_REQUEST\)/,
    );
    greedy.close();
    // The stream opened before still gets pushes.
    await cp.post([slice("10.1.0.1")]);
    expect((await ads.next())?.typeUrl).toBe(EDS);
  });
});
