/**
 * DeltaPollService on workerd, through the real Worker into the MeshStore Durable Object: the
 * shared suite (test/e2e/poll/suite.ts), with pushes made by running the object's alarm, and the
 * object itself reporting how many polls and streams it holds open.
 */
import { runInDurableObject } from "cloudflare:test";
import { afterAll, beforeAll, vi } from "vitest";
import { describePollSuite } from "../e2e/poll/suite.ts";
import { workerTransports } from "./poll-support.ts";
import { freezeClock, ingest, mesh, runAlarmsUntilIdle } from "./support.ts";

beforeAll(() => {
  freezeClock();
});
afterAll(() => {
  vi.useRealTimers();
});

describePollSuite("Workers", () => ({
  transports: workerTransports(),
  async apply(events) {
    const res = await ingest(events);
    if (res.status !== 200) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
    await runAlarmsUntilIdle();
  },
  open: () => runInDurableObject(mesh(), (object) => object.openPolls),
}));
