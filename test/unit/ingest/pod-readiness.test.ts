/**
 * Pods a ServiceEntry's workloadSelector selects, by readiness (Istio: a not-ready pod is no healthy
 * endpoint; PILOT_SEND_UNHEALTHY_ENDPOINTS sends it UNHEALTHY, as on the Kubernetes path; a
 * terminating pod never): what the External shard holds, what is served, and the push of a flip.
 */
import { describe, expect, it } from "vitest";
import { event as ev, pod } from "../../e2e/support/kube.ts";
import { createHarness } from "./support/harness.ts";
import { serviceEntry, workloadEntry } from "./support/istio.ts";

const host = "pay.example.com";
const selecting = serviceEntry("pay", { workloadSelector: { labels: { app: "pay" } } });
/** pay-a, a WorkloadEntry with the pods' service account, so a pod joining changes no identity. */
const payA = workloadEntry("pay-a", { address: "10.2.0.1", labels: { app: "pay" }, serviceAccount: "pay" });

type Readiness = "ready" | "not ready" | "terminating";

/** The pay pod at 10.3.0.1 (one name, so each call is an UPDATE of it). */
function payPod(state: Readiness) {
  const p = pod("pay", "default", "10.3.0.1");
  const status = state === "ready" ? "True" : "False";
  return {
    ...p,
    metadata: {
      ...p.metadata,
      labels: { app: "pay" },
      ...(state === "terminating" && { deletionTimestamp: "2026-01-01T00:00:00Z" }),
    },
    status: { ...p.status, conditions: [{ type: "Ready", status }] },
  };
}

interface Case {
  name: string;
  sendUnhealthy: boolean;
  from: Readiness | undefined;
  to: Readiness;
  /** The batch's push (null: none). */
  push: { full: boolean; configs: number } | null;
  /** What is served for the host after the flush: address and health. */
  served: string[];
}

const cases: Case[] = [
  {
    name: "a not-ready pod is no endpoint",
    sendUnhealthy: false,
    from: undefined,
    to: "not ready",
    push: null,
    served: ["10.2.0.1 HEALTHY"],
  },
  {
    name: "ready ▶ not ready: it leaves, EDS",
    sendUnhealthy: false,
    from: "ready",
    to: "not ready",
    push: { full: false, configs: 1 },
    served: ["10.2.0.1 HEALTHY"],
  },
  {
    name: "not ready ▶ ready: it joins, EDS",
    sendUnhealthy: false,
    from: "not ready",
    to: "ready",
    push: { full: false, configs: 1 },
    served: ["10.2.0.1 HEALTHY", "10.3.0.1 HEALTHY"],
  },
  {
    name: "with PILOT_SEND_UNHEALTHY_ENDPOINTS a not-ready pod is sent UNHEALTHY",
    sendUnhealthy: true,
    from: undefined,
    to: "not ready",
    push: { full: false, configs: 1 },
    served: ["10.2.0.1 HEALTHY", "10.3.0.1 UNHEALTHY"],
  },
  {
    name: "with PILOT_SEND_UNHEALTHY_ENDPOINTS ready ▶ not ready is EDS, the endpoint UNHEALTHY",
    sendUnhealthy: true,
    from: "ready",
    to: "not ready",
    push: { full: false, configs: 1 },
    served: ["10.2.0.1 HEALTHY", "10.3.0.1 UNHEALTHY"],
  },
  {
    name: "with PILOT_SEND_UNHEALTHY_ENDPOINTS not ready ▶ ready is EDS, the endpoint HEALTHY",
    sendUnhealthy: true,
    from: "not ready",
    to: "ready",
    push: { full: false, configs: 1 },
    served: ["10.2.0.1 HEALTHY", "10.3.0.1 HEALTHY"],
  },
  {
    name: "terminating is never sent, even with PILOT_SEND_UNHEALTHY_ENDPOINTS",
    sendUnhealthy: true,
    from: "ready",
    to: "terminating",
    push: { full: false, configs: 1 },
    served: ["10.2.0.1 HEALTHY"],
  },
  {
    name: "not ready ▶ terminating without PILOT_SEND_UNHEALTHY_ENDPOINTS: nothing served changes, no push",
    sendUnhealthy: false,
    from: "not ready",
    to: "terminating",
    push: null,
    served: ["10.2.0.1 HEALTHY"],
  },
];

describe("readiness of Pods a ServiceEntry selects", () => {
  for (const c of cases) {
    it(c.name, async () => {
      const h = createHarness({ sendUnhealthy: c.sendUnhealthy });
      await h.ingest(ev("ADDED", selecting), ev("ADDED", payA));
      if (c.from) await h.ingest(ev("ADDED", payPod(c.from)));
      await h.settle();
      const summary = await h.ingest(ev(c.from ? "MODIFIED" : "ADDED", payPod(c.to)));
      expect(summary).toMatchObject({ applied: 1 });
      expect(summary.push).toEqual(c.push);
      await h.settle();
      expect((await h.served(host))?.map((e) => `${e.address} ${e.health}`)).toEqual(c.served);
    });
  }
});
