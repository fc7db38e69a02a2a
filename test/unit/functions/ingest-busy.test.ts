/**
 * The HTTP edge of ingest over a shared store: while another instance holds the store's ingest
 * lease past the wait bound, a call answers 503 with Retry-After and a message saying why, and
 * nothing of it is applied; once the lease is free, the same call is applied.
 */
import { describe, expect, it } from "vitest";
import { createIngestApp } from "../../../functions/ingest.ts";
import type { IngestLeaseRecord } from "../../../lib/core/ingest-lease.ts";
import { defaultRegistryOptions } from "../../../lib/ingest/index.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { event, service } from "../../e2e/support/kube.ts";
import { createManualClock } from "../relay/manual-clock.ts";

describe("ingest while the store's ingest lease is held elsewhere", () => {
  it("answers 503 with Retry-After, applies nothing, and applies the call once the lease is free", async () => {
    const store = createMemoryStore();
    const clock = createManualClock();
    const lines: string[] = [];
    const app = createIngestApp({
      store,
      registry: defaultRegistryOptions,
      now: () => clock.now(),
      token: "t",
      clusterId: "Kubernetes",
      allowUnauthenticated: () => false,
      log: (line) => lines.push(line),
      lease: { timers: clock, maxWaitMs: 0 },
    });
    const held: IngestLeaseRecord = { owner: "instance-b", expiresAt: 20_000 };
    await store.put(keys.ingestLease(), held);
    const post = () =>
      app.request("/v1/events", {
        method: "POST",
        headers: { authorization: "Bearer t", "content-type": "application/json" },
        body: JSON.stringify([event("ADDED", service("reviews", "default", [{ name: "grpc", port: 9080 }]))]),
      });

    const busy = await post();
    expect(busy.status).toBe(503);
    // At most the wait bound (0 here), at least 1 s: a holder usually releases long before its hold expires.
    expect(busy.headers.get("retry-after")).toBe("1");
    expect(((await busy.json()) as { error: string }).error).toMatch(
      /another instance holds the store's ingest lease \(holder "instance-b".*nothing applied, retry/,
    );
    expect(lines.join("\n")).toContain("answered 503");
    expect(await store.get(keys.object("Kubernetes", "Service", "default", "reviews"))).toBeUndefined();

    await store.delete(keys.ingestLease());
    const ok = await post();
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect(await store.get(keys.object("Kubernetes", "Service", "default", "reviews"))).toBeDefined();
  });
});
