/**
 * Security policies through the mesh core on a manual clock over the memory store (no sleeps): a
 * PeerAuthentication or AuthorizationPolicy ingested is a Full push naming it alone, announced as a
 * refresh (no shared resource changes; the proxies it selects re-derive), whose push context
 * answers with it; an UPDATE with the same spec pushes nothing; a push naming no policy keeps the
 * last context's policies (Istio's PushContext.updateContext) and one naming a policy reads them again.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { createMeshCore } from "../../../lib/core/mesh-core.ts";
import { defaultRegistryOptions } from "../../../lib/ingest/context.ts";
import { validateEvents } from "../../../lib/ingest/index.ts";
import { defaultDebounceOptions } from "../../../lib/push/debounce.ts";
import type { Push } from "../../../lib/resources/changes.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { event, service } from "../../e2e/support/kube.ts";
import { createManualClock } from "../relay/manual-clock.ts";

const port = { name: "grpc", port: 9080 };
const reviews = { namespace: "default", labels: { app: "reviews" } };

function securityObject(kind: string, name: string, spec: unknown, resourceVersion = "1") {
  return {
    apiVersion: "security.istio.io/v1",
    kind,
    metadata: { name, namespace: "default", resourceVersion, creationTimestamp: "2026-01-01T00:00:00Z" },
    spec,
  };
}
const strict = (rv?: string) =>
  securityObject("PeerAuthentication", "default", { mtls: { mode: "STRICT" } }, rv);

function harness() {
  const clock = createManualClock();
  const core = createMeshCore({
    store: createMemoryStore(),
    config: { debounce: defaultDebounceOptions, registry: defaultRegistryOptions, syncTimeoutMs: 60_000 },
    timers: clock,
    log: () => {},
    requestTurn: () => {},
    newId: () => "instance-1",
  });
  const pushes: Push[] = [];
  core.feed.subscribe((p) => {
    if (p.version > 0) pushes.push(p);
  });
  const events = async (...raw: unknown[]) => {
    const v = validateEvents(raw);
    if (!v.ok) throw new Error(`${v.error.field}: ${v.error.message}`);
    return core.ingest.events("east", v.value);
  };
  const settle = async () => {
    await clock.advance(defaultDebounceOptions.debounceAfter);
    return core.turn();
  };
  return { core, pushes, events, settle };
}

let h: ReturnType<typeof harness>;
beforeEach(async () => {
  h = harness();
  await h.core.start();
  await h.events(event("ADDED", service("reviews", "default", [port])));
  await h.settle();
});

describe("a security policy through the core", () => {
  it("pushes Full naming the policy alone, as a refresh, and the push context answers with it", async () => {
    const before = h.pushes.length;
    expect(h.pushes.at(-1)?.context?.security.mtlsFor(reviews)).toEqual({ mode: "PERMISSIVE" });
    const summary = await h.events(event("ADDED", strict()));
    expect(summary.applied).toBe(1);
    const turn = await h.settle();
    expect(turn.flushes[0]?.request?.full).toBe(true);
    expect(turn.flushes[0]?.request?.configsUpdated).toEqual(["PeerAuthentication/default/default"]);
    expect(h.pushes).toHaveLength(before + 1);
    const push = h.pushes.at(-1) as Push;
    expect(push.refresh).toBe(true);
    expect(push.changes).toEqual([]);
    expect(push.context?.security.mtlsFor(reviews)).toEqual({ mode: "STRICT" });
    expect(push.context?.security.mtlsForPort({ namespace: "other", labels: {} }, 9080)).toBe("PERMISSIVE");
  });

  it("pushes nothing for an UPDATE whose spec is unchanged", async () => {
    await h.events(event("ADDED", strict("1")));
    await h.settle();
    const before = h.pushes.length;
    const summary = await h.events(event("MODIFIED", strict("2")));
    expect(summary).toMatchObject({ applied: 0, unchanged: 1 });
    const turn = await h.settle();
    expect(turn.flushes).toEqual([]);
    expect(h.pushes).toHaveLength(before);
  });

  it("pushes again when the mode changes, and when the policy is deleted", async () => {
    await h.events(event("ADDED", strict("1")));
    await h.settle();
    const disable = securityObject("PeerAuthentication", "default", { mtls: { mode: "DISABLE" } }, "2");
    await h.events(event("MODIFIED", disable));
    await h.settle();
    expect(h.pushes.at(-1)?.context?.security.mtlsFor(reviews)).toEqual({ mode: "DISABLE" });
    await h.events(event("DELETED", securityObject("PeerAuthentication", "default", {}, "3")));
    await h.settle();
    expect(h.pushes.at(-1)?.refresh).toBe(true);
    expect(h.pushes.at(-1)?.context?.security.mtlsFor(reviews)).toEqual({ mode: "PERMISSIVE" });
  });

  it("lists an AuthorizationPolicy for the workloads it selects, by action", async () => {
    const deny = securityObject("AuthorizationPolicy", "deny-admin", {
      selector: { matchLabels: { app: "reviews" } },
      action: "DENY",
      rules: [{ to: [{ operation: { paths: ["/admin"] } }] }],
    });
    await h.events(event("ADDED", deny));
    await h.settle();
    const security = h.pushes.at(-1)?.context?.security;
    expect(security?.authorizationFor(reviews).deny.map((p) => p.name)).toEqual(["deny-admin"]);
    expect(security?.authorizationFor({ namespace: "default", labels: { app: "ratings" } }).deny).toEqual([]);
  });

  it("keeps the last context's policies on a push naming none, and reads them again on one that does", async () => {
    await h.events(event("ADDED", strict()));
    await h.settle();
    const first = h.pushes.at(-1)?.context?.security;
    await h.events(event("ADDED", service("ratings", "default", [port])));
    await h.settle();
    const kept = h.pushes.at(-1)?.context;
    expect(kept?.security).toBe(first);
    const allow = securityObject("AuthorizationPolicy", "allow-all", { rules: [{}] });
    await h.events(event("ADDED", allow));
    await h.settle();
    const read = h.pushes.at(-1)?.context?.security;
    expect(read).not.toBe(first);
    expect(read?.mtlsFor(reviews)).toEqual({ mode: "STRICT" });
    expect(read?.authorizationFor(reviews).allow.map((p) => p.name)).toEqual(["allow-all"]);
  });

  it("keeps an AuthorizationPolicy's istio.io/dry-run annotation (shadow rules, never enforced), and a change of it alone pushes", async () => {
    const deny = (dryRun: string | undefined, rv: string) => {
      const o = securityObject("AuthorizationPolicy", "deny-all", { action: "DENY", rules: [{}] }, rv);
      return dryRun === undefined
        ? o
        : { ...o, metadata: { ...o.metadata, annotations: { "istio.io/dry-run": dryRun } } };
    };
    await h.events(event("ADDED", deny("true", "1")));
    await h.settle();
    expect(h.pushes.at(-1)?.context?.security.authorizationFor(reviews).deny[0]?.dryRun).toBe(true);
    const before = h.pushes.length;
    expect(await h.events(event("MODIFIED", deny(undefined, "2")))).toMatchObject({ applied: 1 });
    await h.settle();
    expect(h.pushes).toHaveLength(before + 1);
    expect(h.pushes.at(-1)?.context?.security.authorizationFor(reviews).deny[0]?.dryRun).toBeUndefined();
    expect(await h.events(event("MODIFIED", deny("False", "3")))).toMatchObject({ unchanged: 1 });
  });
});
