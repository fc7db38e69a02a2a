/**
 * The proxyless gRPC suite, run once per store (test/e2e/proxyless-grpc*.test.ts, one file each so
 * each gets a fresh grpc-js-xds client): Kubernetes events go in through the ingest webhook of the
 * real Node runtime, and a real proxyless gRPC client (grpc-js-xds, SotW ADS) follows every change.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Backend, startBackend } from "./backends.ts";
import { post, until } from "./converge.ts";
import { endpointSlice, event, pod, service } from "./kube.ts";
import { freePort, type RunningControlPlane, startControlPlane } from "./runtime.ts";
import { bootstrapXds, type WhoClient, whoClient } from "./xds-client.ts";

/** The environment that selects a store, and how to tear down what serves it. */
export interface StoreUnderTest {
  env: Record<string, string>;
  /** What the runtime's start-up output must say (that it opened this store). */
  startedWith?: RegExp;
  stop(): Promise<void>;
}

/** Defines the suite against a control plane started with the store `start` gives. */
export function proxylessSuite(name: string, start: () => Promise<StoreUnderTest>): void {
  const ns = "default";
  const grpcPort = { name: "grpc", port: 9080 };
  const target = "xds:///reviews.default.svc.cluster.local:9080";

  let cp: RunningControlPlane;
  let backends: Record<"a" | "b" | "c", Backend>;
  let client: WhoClient;
  let backendPort: number;

  let storeUnderTest: StoreUnderTest | undefined;

  beforeAll(async () => {
    storeUnderTest = await start();
    backendPort = await freePort();
    backends = {
      a: await startBackend("a", "127.0.0.1", backendPort),
      b: await startBackend("b", "127.0.0.2", backendPort),
      c: await startBackend("c", "127.0.0.3", backendPort),
    };
    cp = await startControlPlane(storeUnderTest.env);
    // The runtime opened the store under test (not a default it fell back to).
    if (storeUnderTest.startedWith) expect(cp.output()).toMatch(storeUnderTest.startedWith);
    const pods = ["127.0.0.1", "127.0.0.2", "127.0.0.3"].map((ip) => event("ADDED", pod("reviews", ns, ip)));
    expect((await cp.post(pods)).status).toBe(200);
    bootstrapXds(cp.xdsPort, "sidecar~127.0.0.9~e2e-client.default~default.svc.cluster.local");
    client = whoClient(target);
  });

  afterAll(async () => {
    client?.close();
    await cp?.stop();
    await Promise.all(Object.values(backends ?? {}).map((b) => b.stop()));
    await storeUnderTest?.stop();
  });

  describe(`proxyless gRPC through edgepilot (${name} store)`, () => {
    const slicePort = () => ({ name: "grpc", port: backendPort });

    it("resolves a new service and calls its endpoint", async () => {
      const at = await post(
        cp,
        event("ADDED", service("reviews", ns, [grpcPort])),
        event(
          "ADDED",
          endpointSlice("reviews-x1", "reviews", ns, slicePort(), [{ ip: "127.0.0.1", ready: true }]),
        ),
      );
      const ms = await until(cp, client, at, { accept: (a) => a === "a", what: "backend a" });
      console.log(`e2e (${name}): POST of a new service ▶ first call on its endpoint: ${ms}ms`);
    });

    it("follows a MODIFIED slice that moves the endpoint", async () => {
      const at = await post(
        cp,
        event(
          "MODIFIED",
          endpointSlice("reviews-x1", "reviews", ns, slicePort(), [{ ip: "127.0.0.2", ready: true }]),
        ),
      );
      const ms = await until(cp, client, at, { accept: (a) => a === "b", what: "backend b only" });
      console.log(`e2e (${name}): POST of a moved endpoint ▶ first call on the new endpoint: ${ms}ms`);
      expect(cp.output()).toMatch(/push \d+: incremental/);
    });

    it("adds the endpoints of a second slice", async () => {
      const at = await post(
        cp,
        event(
          "ADDED",
          endpointSlice("reviews-x2", "reviews", ns, slicePort(), [{ ip: "127.0.0.3", ready: true }]),
        ),
      );
      await until(cp, client, at, { accept: (a) => a === "c", what: "backend c", settle: 1 });
      const seen = new Set<string>();
      for (let i = 0; i < 20; i++) seen.add(await client.who());
      expect([...seen].sort()).toEqual(["b", "c"]);
    });

    it("drops an endpoint that is no longer ready", async () => {
      const at = await post(
        cp,
        event(
          "MODIFIED",
          endpointSlice("reviews-x1", "reviews", ns, slicePort(), [{ ip: "127.0.0.2", ready: false }]),
        ),
      );
      await until(cp, client, at, { accept: (a) => a === "c", what: "backend c only", settle: 10 });
    });

    it("fails calls once the service is DELETED", async () => {
      const at = await post(cp, event("DELETED", service("reviews", ns, [grpcPort])));
      await until(cp, client, at, {
        accept: (a) => a.startsWith("error:"),
        what: "calls failing",
        settle: 3,
      });
    });
  });
}
