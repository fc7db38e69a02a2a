/**
 * VirtualService and DestinationRule through the real Node runtime: a real proxyless gRPC client
 * (grpc-js-xds) calling real gRPC backends on 127.0.0.x is routed by a request header to subset
 * v2, and back to every endpoint once the VirtualService is deleted. Observed through calls only.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { destinationRule, virtualService } from "../unit/ingest/support/istio.ts";
import { type Backend, startBackend } from "./support/backends.ts";
import { post, until } from "./support/converge.ts";
import { endpointSlice, event, service, versionedPod } from "./support/kube.ts";
import { freePort, type RunningControlPlane, startControlPlane } from "./support/runtime.ts";
import { bootstrapXds, type WhoClient, whoClient } from "./support/xds-client.ts";

const ns = "default";
const target = "xds:///reviews.default.svc.cluster.local:9080";
const jason = { "x-user": "jason" };
/** x-user: jason ▶ subset v2; everything else ▶ subset v1. */
const jasonToV2 = {
  http: [
    {
      match: [{ headers: { "x-user": { exact: "jason" } } }],
      route: [{ destination: { host: "reviews", subset: "v2" } }],
    },
    { route: [{ destination: { host: "reviews", subset: "v1" } }] },
  ],
};

let cp: RunningControlPlane;
let backends: Backend[] = [];
let client: WhoClient;

const versioned = (ip: string, version: string) => event("ADDED", versionedPod("reviews", ns, ip, version));

beforeAll(async () => {
  const port = await freePort();
  backends = [await startBackend("a", "127.0.0.1", port), await startBackend("b", "127.0.0.2", port)];
  cp = await startControlPlane({ PILOT_DEBOUNCE_AFTER: "10ms" });
  const slice = endpointSlice("reviews-1", "reviews", ns, { name: "grpc", port }, [
    { ip: "127.0.0.1", ready: true },
    { ip: "127.0.0.2", ready: true },
  ]);
  await post(
    cp,
    versioned("127.0.0.1", "v1"),
    versioned("127.0.0.2", "v2"),
    event("ADDED", service("reviews", ns, [{ name: "grpc", port: 9080 }])),
    event("ADDED", slice),
  );
  bootstrapXds(cp.xdsPort, "sidecar~127.0.0.9~e2e-client.default~default.svc.cluster.local");
  client = whoClient(target);
});

afterAll(async () => {
  client?.close();
  await cp?.stop();
  await Promise.all(backends.map((b) => b.stop()));
});

describe("VirtualService and DestinationRule for proxyless gRPC", () => {
  it("routes by header to subset v2, everything else to v1", async () => {
    // Before any config: both endpoints answer.
    await until(cp, client, Date.now(), {
      accept: (a) => a === "a" || a === "b",
      what: "the default route",
      settle: 10,
    });
    const at = await post(
      cp,
      event(
        "ADDED",
        destinationRule("reviews", [
          { name: "v1", labels: { version: "v1" } },
          { name: "v2", labels: { version: "v2" } },
        ]),
      ),
      event("ADDED", virtualService("reviews", jasonToV2, { resourceVersion: "100" })),
    );
    const ms = await until(cp, client, at, {
      accept: (a) => a === "b",
      what: "subset v2 for x-user: jason",
      settle: 10,
      headers: jason,
    });
    console.log(`e2e: VirtualService POST ▶ first call taking the new route: ${ms}ms`);
    await until(cp, client, at, {
      accept: (a) => a === "a",
      what: "subset v1 without the header",
      settle: 10,
    });
    for (let i = 0; i < 20; i++) expect(await client.who(1000, jason)).toBe("b");
  });

  it("an unchanged VirtualService UPDATE pushes nothing", async () => {
    const res = await cp.post([
      event("MODIFIED", virtualService("reviews", jasonToV2, { resourceVersion: "101" })),
    ]);
    expect(await res.json()).toMatchObject({ applied: 0, unchanged: 1, push: null });
  });

  it("a deleted VirtualService sends calls to every endpoint again", async () => {
    const at = await post(
      cp,
      event(
        "DELETED",
        virtualService(
          "reviews",
          { http: [{ route: [{ destination: { host: "reviews", subset: "v1" } }] }] },
          { resourceVersion: "102" },
        ),
      ),
    );
    await until(cp, client, at, {
      accept: (a) => a === "a" || a === "b",
      what: "the default route",
      settle: 10,
      headers: jason,
    });
    const seen = new Set<string>();
    for (let i = 0; i < 30; i++) seen.add(await client.who(1000, jason));
    expect([...seen].sort()).toEqual(["a", "b"]);
  });
});
