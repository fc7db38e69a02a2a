/** REST-JSON xDS on the Worker (workerd, over the MeshStore): the shared suite. */
import { afterAll, beforeAll, vi } from "vitest";
import { describeRestSuite } from "../e2e/poll/rest-suite.ts";
import { freezeClock, ingest, runAlarmsUntilIdle, worker, xdsAuth } from "./support.ts";

beforeAll(() => {
  freezeClock();
});
afterAll(() => {
  vi.useRealTimers();
});

describeRestSuite("Workers", () => ({
  post: (path, body) =>
    worker(path, { method: "POST", headers: { "content-type": "application/json", ...xdsAuth }, body }),
  async apply(events) {
    const res = await ingest(events);
    if (res.status !== 200) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
    await runAlarmsUntilIdle();
  },
}));
