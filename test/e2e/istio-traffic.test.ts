/**
 * VirtualService and DestinationRule traffic features through the real Node runtime, each shown by
 * calls of a real proxyless gRPC client (grpc-js-xds) to real gRPC backends on 127.0.0.x: an 80/20
 * weighted split, a fault abort, a fault delay and a route timeout (DEADLINE_EXCEEDED), retries
 * that make a flaky backend succeed, ring hash on a header, and dangling routes failing at once
 * with UNAVAILABLE (alone and as a split's share) while the other routes of the same
 * VirtualService keep working. One VirtualService holds a route per case, chosen by `x-case`.
 * grpc-js-xds 1.14 turns fault injection, retries, ring hash and outlier detection on by default
 * (its GRPC_XDS_EXPERIMENTAL_* variables default to true), so the client process sets none.
 */
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { destinationRule, virtualService } from "../unit/ingest/support/istio.ts";
import { type Backend, startBackend } from "./support/backends.ts";
import { post, until } from "./support/converge.ts";
import { endpointSlice, event, service, versionedPod } from "./support/kube.ts";
import { freePort, type RunningControlPlane, startControlPlane } from "./support/runtime.ts";
import { bootstrapXds, type WhoClient, whoClient } from "./support/xds-client.ts";

const ns = "default";
const REVIEWS = "reviews.default.svc.cluster.local";
const on = (c: string) => ({ match: [{ headers: { "x-case": { exact: c } } }] });
const to = (subset: string, weight?: number) => ({
  destination: { host: "reviews", subset },
  ...(weight !== undefined && { weight }),
});

/** Every case of the suite as one route, the catch-all to v3 (backend c) last. */
const cases = {
  http: [
    { ...on("split"), route: [to("v1", 80), to("v2", 20)] },
    {
      ...on("abort"),
      fault: { abort: { grpcStatus: "PERMISSION_DENIED", percentage: { value: 100 } } },
      route: [to("v1")],
    },
    { ...on("delay"), fault: { delay: { fixedDelay: "2s", percentage: { value: 100 } } }, route: [to("v1")] },
    {
      ...on("timeout"),
      timeout: "0.2s",
      fault: { delay: { fixedDelay: "2s", percentage: { value: 100 } } },
      route: [to("v1")],
    },
    { ...on("ring"), route: [to("ring")] },
    { ...on("ghost"), route: [{ destination: { host: "ghost" } }] },
    { ...on("v9"), route: [to("v9")] },
    { ...on("half"), route: [to("v1", 50), to("v9", 50)] },
    { route: [to("v3")] },
  ],
};
const rule = destinationRule("reviews", [
  { name: "v1", labels: { version: "v1" } },
  { name: "v2", labels: { version: "v2" } },
  { name: "v3", labels: { version: "v3" } },
  {
    name: "ring",
    labels: { app: "reviews" },
    trafficPolicy: { loadBalancer: { consistentHash: { httpHeaderName: "x-user" } } },
  },
]);

let cp: RunningControlPlane;
let backends: Backend[] = [];
let reviews: WhoClient;
let flaky: WhoClient;
/** The ingest summary of the POST that created the VirtualService. */
let created: { dangling?: string[] };

/** The answer of one call (`error:<code>` when it fails) and how long it took. */
async function call(client: WhoClient, headers: Record<string, string>, deadlineMs = 2000) {
  const at = Date.now();
  const answer = await client.who(deadlineMs, headers).catch((e: { code?: number }) => `error:${e.code}`);
  return { answer, ms: Date.now() - at };
}

/** `n` calls, `parallel` at a time; the answers counted. */
async function tally(client: WhoClient, n: number, headers: Record<string, string>, parallel = 50) {
  const counts: Record<string, number> = {};
  for (let done = 0; done < n; done += parallel) {
    const batch = Array.from({ length: Math.min(parallel, n - done) }, () => call(client, headers));
    for (const { answer } of await Promise.all(batch)) counts[answer] = (counts[answer] ?? 0) + 1;
  }
  return counts;
}

beforeAll(async () => {
  const port = await freePort();
  const everyOther = (n: number) => (n % 2 === 1 ? status.UNAVAILABLE : undefined);
  backends = await Promise.all([
    startBackend("a", "127.0.0.1", port),
    startBackend("b", "127.0.0.2", port),
    startBackend("c", "127.0.0.3", port),
    startBackend("f", "127.0.0.4", port, { fail: everyOther }),
  ]);
  cp = await startControlPlane({ PILOT_DEBOUNCE_AFTER: "10ms" });
  const grpcPort = { name: "grpc", port: 9080 };
  const ready = (ip: string) => ({ ip, ready: true });
  await post(
    cp,
    ...["v1", "v2", "v3"].map((v, i) => event("ADDED", versionedPod("reviews", ns, `127.0.0.${i + 1}`, v))),
    event("ADDED", versionedPod("flaky", ns, "127.0.0.4", "v1")),
    event("ADDED", service("reviews", ns, [grpcPort])),
    event("ADDED", service("flaky", ns, [grpcPort])),
    event(
      "ADDED",
      endpointSlice(
        "reviews-1",
        "reviews",
        ns,
        { name: "grpc", port },
        ["127.0.0.1", "127.0.0.2", "127.0.0.3"].map(ready),
      ),
    ),
    event("ADDED", endpointSlice("flaky-1", "flaky", ns, { name: "grpc", port }, [ready("127.0.0.4")])),
    event("ADDED", rule),
  );
  bootstrapXds(cp.xdsPort, "sidecar~127.0.0.9~e2e-traffic.default~default.svc.cluster.local");
  reviews = whoClient(`xds:///${REVIEWS}:9080`);
  flaky = whoClient("xds:///flaky.default.svc.cluster.local:9080");
  // Before the VirtualService: the default route to every endpoint.
  await until(cp, reviews, Date.now(), {
    accept: (a) => a === "a" || a === "b" || a === "c",
    what: "the default route",
  });
  const at = Date.now();
  const res = await cp.post([event("ADDED", virtualService("reviews", cases, { resourceVersion: "100" }))]);
  expect(res.status).toBe(200);
  created = (await res.json()) as { dangling?: string[] };
  // Converged once the catch-all sends every plain call to v3 (before it, a, b and c all answer).
  const ms = await until(cp, reviews, at, {
    accept: (a) => a === "c",
    what: "the catch-all to v3",
    settle: 20,
  });
  console.log(`e2e: VirtualService POST (9 routes) ▶ first call taking the new route: ${ms}ms`);
});

afterAll(async () => {
  reviews?.close();
  flaky?.close();
  await cp?.stop();
  await Promise.all(backends.map((b) => b.stop()));
});

describe("VirtualService traffic features, observed through calls", () => {
  it("an 80/20 weighted split: v2 gets 20% of 500 calls (±6 points)", async () => {
    const counts = await tally(reviews, 500, { "x-case": "split" });
    expect(Object.keys(counts).sort()).toEqual(["a", "b"]);
    expect(counts.b).toBeGreaterThanOrEqual(70);
    expect(counts.b).toBeLessThanOrEqual(130);
  });

  it("a fault abort answers every call with the configured status", async () => {
    expect(await tally(reviews, 20, { "x-case": "abort" })).toEqual({
      [`error:${status.PERMISSION_DENIED}`]: 20,
    });
  });

  it("a fault delay outlasts the caller's deadline: DEADLINE_EXCEEDED", async () => {
    const { answer, ms } = await call(reviews, { "x-case": "delay" }, 300);
    expect(answer).toBe(`error:${status.DEADLINE_EXCEEDED}`);
    expect(ms).toBeLessThan(1500);
  });

  it("a route timeout of 0.2s cuts a 2s delay: DEADLINE_EXCEEDED near 200ms, the caller allowing 5s", async () => {
    const { answer, ms } = await call(reviews, { "x-case": "timeout" }, 5000);
    expect(answer).toBe(`error:${status.DEADLINE_EXCEEDED}`);
    expect(ms).toBeGreaterThanOrEqual(150);
    expect(ms).toBeLessThan(1500);
  });

  it("ring hash on x-user: one user stays on one backend, users spread over several", async () => {
    // grpc-js-xds 1.14's ring_hash queues the first call to an IDLE ring entry whose address is
    // already connected (by the v1/v2/v3 clusters) and does not pick it again (pick_first turns
    // READY inside the pick); such a call waits out its deadline. Warm every entry first.
    const users = Array.from({ length: 12 }, (_, u) => `user-${u}`);
    for (let round = 0; round < 20; round++) {
      const answers = await Promise.all(
        users.map((u) => call(reviews, { "x-case": "ring", "x-user": u }, 300)),
      );
      if (answers.every((a) => !a.answer.startsWith("error"))) break;
    }
    const chosen = new Set<string>();
    for (const u of users) {
      const counts = await tally(reviews, 10, { "x-case": "ring", "x-user": u }, 5);
      expect(Object.keys(counts), `${u}: ${JSON.stringify(counts)}`).toHaveLength(1);
      const [backend] = Object.keys(counts) as [string];
      expect(["a", "b", "c"]).toContain(backend);
      chosen.add(backend);
    }
    expect(chosen.size).toBeGreaterThanOrEqual(2);
  });

  it("a route to a host or subset that does not exist fails at once with UNAVAILABLE; the others work", async () => {
    let slowest = 0;
    for (const c of ["ghost", "v9"]) {
      for (let i = 0; i < 5; i++) {
        const { answer, ms } = await call(reviews, { "x-case": c });
        expect(answer, c).toBe(`error:${status.UNAVAILABLE}`);
        expect(ms, c).toBeLessThan(500);
        slowest = Math.max(slowest, ms);
      }
    }
    console.log(`e2e: a call on a dangling route fails UNAVAILABLE in at most ${slowest}ms (10 calls)`);
    expect((await call(reviews, {})).answer).toBe("c");
    expect(await tally(reviews, 10, { "x-case": "abort" })).toEqual({
      [`error:${status.PERMISSION_DENIED}`]: 10,
    });
    expect(created.dangling).toEqual([
      `VirtualService default/reviews: spec.http[5]: ghost.default.svc.cluster.local: no service has host ghost.default.svc.cluster.local`,
      `VirtualService default/reviews: spec.http[6]: ${REVIEWS} subset v9: no DestinationRule for ${REVIEWS} defines subset v9`,
      `VirtualService default/reviews: spec.http[7]: ${REVIEWS} subset v9: no DestinationRule for ${REVIEWS} defines subset v9`,
    ]);
  });

  it("a split with a dangling half: about half the calls fail UNAVAILABLE, the rest reach v1", async () => {
    const counts = await tally(reviews, 200, { "x-case": "half" });
    expect(Object.keys(counts).sort()).toEqual(["a", `error:${status.UNAVAILABLE}`]);
    expect(counts.a).toBeGreaterThanOrEqual(70);
    expect(counts.a).toBeLessThanOrEqual(130);
  });

  it("retries on UNAVAILABLE make a backend that fails every other call succeed", async () => {
    // No VirtualService: the default route retries nothing, so every other call fails.
    const before = await tally(flaky, 10, {}, 1);
    expect(before).toEqual({ f: 5, [`error:${status.UNAVAILABLE}`]: 5 });
    const at = await post(
      cp,
      event(
        "ADDED",
        virtualService(
          "flaky",
          {
            http: [
              {
                retries: { attempts: 2, retryOn: "unavailable" },
                route: [{ destination: { host: "flaky" } }],
              },
            ],
          },
          { resourceVersion: "200" },
        ),
      ),
    );
    await until(cp, flaky, at, { accept: (a) => a === "f", what: "retried calls", settle: 10 });
    expect(await tally(flaky, 40, {}, 1)).toEqual({ f: 40 });
  });
});
