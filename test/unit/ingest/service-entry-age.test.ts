/**
 * A ServiceEntry whose creationTimestamp alone changes (an UPDATE, or an entry re-created under the
 * same name whose DELETE was missed): Full for the hosts where the oldest-entry-wins precedence
 * picks another entry, nothing where it cannot (no competitor, or a Kubernetes Service wins).
 */
import { describe, expect, it } from "vitest";
import { event as ev, service } from "../../e2e/support/kube.ts";
import { createHarness } from "./support/harness.ts";
import { serviceEntry } from "./support/istio.ts";

const T1 = "2026-01-01T00:00:00Z";
const T2 = "2026-02-01T00:00:00Z";
const T3 = "2026-03-01T00:00:00Z";

/** `name` declaring `hosts` (pay.example.com by default), created at `at`. */
const entry = (name: string, rv: string, at: string, hosts = ["pay.example.com"]) =>
  serviceEntry(
    name,
    { hosts, endpoints: [{ address: "10.1.0.1" }] },
    { resourceVersion: rv, creationTimestamp: at },
  );

const kubeHost = "pay.default.svc.cluster.local";

interface Case {
  name: string;
  before: unknown[];
  events: unknown[];
  push: { full: boolean; configs: number } | null;
}

const cases: Case[] = [
  {
    name: "the only entry of its host: no push (nothing competes)",
    before: [ev("ADDED", entry("pay", "1", T1))],
    events: [ev("MODIFIED", entry("pay", "2", T2))],
    push: null,
  },
  {
    name: "the oldest entry becomes the newest: Full naming the host",
    before: [ev("ADDED", entry("pay", "1", T1)), ev("ADDED", entry("pay-b", "1", T2))],
    events: [ev("MODIFIED", entry("pay", "2", T3))],
    push: { full: true, configs: 1 },
  },
  {
    name: "the newest entry grows newer still: the winner stays, no push",
    before: [ev("ADDED", entry("pay", "1", T2)), ev("ADDED", entry("pay-b", "1", T1))],
    events: [ev("MODIFIED", entry("pay", "2", T3))],
    push: null,
  },
  {
    name: "a re-created entry (ADDED again, its DELETE missed) now younger than its rival: Full",
    before: [ev("ADDED", entry("pay", "1", T1)), ev("ADDED", entry("pay-b", "1", T2))],
    events: [ev("ADDED", entry("pay", "5", T3))],
    push: { full: true, configs: 1 },
  },
  {
    name: "of two hosts only the contested one is named",
    before: [
      ev("ADDED", entry("pay", "1", T1, ["pay.example.com", "solo.example.com"])),
      ev("ADDED", entry("pay-b", "1", T2)),
    ],
    events: [ev("MODIFIED", entry("pay", "2", T3, ["pay.example.com", "solo.example.com"]))],
    push: { full: true, configs: 1 },
  },
  {
    name: "a Kubernetes Service of the host wins whatever the entries' ages: no push",
    before: [
      ev("ADDED", service("pay", "default", [{ name: "grpc", port: 9080 }])),
      ev("ADDED", entry("pay", "1", T1, [kubeHost])),
      ev("ADDED", entry("pay-b", "1", T2, [kubeHost])),
    ],
    events: [ev("MODIFIED", entry("pay", "2", T3, [kubeHost]))],
    push: null,
  },
];

describe("ServiceEntry creationTimestamp-only changes", () => {
  for (const c of cases) {
    it(c.name, async () => {
      const h = createHarness();
      await h.ingest(...c.before);
      await h.settle();
      const summary = await h.ingest(...c.events);
      expect(summary).toMatchObject({ applied: 1, unchanged: 0, stale: 0 });
      expect(summary.push).toEqual(c.push);
    });
  }
});
