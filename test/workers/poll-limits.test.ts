/** The limits on workerd: the Worker and its MeshStore run with testLimits (vitest.workers.config.ts). */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterAll, beforeAll, expect, vi } from "vitest";
import { describeLimitsSuite, testLimits } from "../e2e/poll/limits-suite.ts";
import { workerTransport } from "./poll-support.ts";
import { freezeClock, ingest, mesh, runAlarmsUntilIdle, worker, xdsAuth } from "./support.ts";

beforeAll(() => {
  freezeClock();
  for (const [name, value] of Object.entries(testLimits))
    expect(env[name as keyof typeof env], name).toBe(value);
});
afterAll(() => {
  vi.useRealTimers();
});

describeLimitsSuite("Workers", () => ({
  transports: [workerTransport(true), workerTransport(false)],
  post: (path, body) =>
    worker(path, { method: "POST", headers: { "content-type": "application/json", ...xdsAuth }, body }),
  async apply(events) {
    const res = await ingest(events);
    if (res.status !== 200) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
    await runAlarmsUntilIdle();
  },
  open: () => runInDurableObject(mesh(), (object) => object.openPolls),
}));
