import { describe, expect, it } from "vitest";
import type { DeliveryStats } from "../../../lib/relay/delivery.ts";
import { type KindHealth, relayReadiness } from "../../../lib/relay/health.ts";

const stats: DeliveryStats = {
  queuedEvents: 0,
  queuedEntries: 0,
  deliveredEvents: 3,
  deliveredResyncs: 2,
  rejectedEvents: 0,
  rejectedResyncs: 0,
  retries: 0,
};
const kind = (name: string, listed: boolean): KindHealth => ({ kind: name, listed });

describe("relayReadiness", () => {
  const cases: {
    name: string;
    kinds: KindHealth[];
    stopping: boolean;
    status: number;
    waitingFor: string[];
  }[] = [
    {
      name: "every kind listed",
      kinds: [kind("Service", true), kind("Pod", true)],
      stopping: false,
      status: 200,
      waitingFor: [],
    },
    {
      name: "one kind not yet listed",
      kinds: [kind("Service", true), kind("Pod", false)],
      stopping: false,
      status: 503,
      waitingFor: ["Pod"],
    },
    { name: "nothing watched yet", kinds: [], stopping: false, status: 503, waitingFor: [] },
    {
      name: "stopping (SIGTERM)",
      kinds: [kind("Service", true)],
      stopping: true,
      status: 503,
      waitingFor: [],
    },
  ];
  for (const c of cases) {
    it(`${c.name} ▶ ${c.status}`, () => {
      const r = relayReadiness(c.kinds, stats, c.stopping);
      expect(r.status).toBe(c.status);
      expect(r.body).toEqual({
        ready: c.status === 200,
        stopping: c.stopping,
        waitingFor: c.waitingFor,
        kinds: c.kinds.length,
        stats,
      });
    });
  }
});
