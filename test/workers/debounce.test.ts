/**
 * The MeshStore's debounce driver on workerd: what kick() does to the alarm, what alarm() re-arms,
 * and how a failed turn retries. The clock is frozen a day ahead, so no alarm fires on its own.
 */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { keys } from "../../lib/store/keys.ts";
import events from "../fixtures/parity/events.json";
import {
  advanceClockTo,
  alarmAt,
  freezeClock,
  getStatus,
  ingest,
  mesh,
  runAlarmsUntilIdle,
} from "./support.ts";

const setAlarm = (at: number) => runInDurableObject(mesh(), (_o, state) => state.storage.setAlarm(at));

beforeAll(() => {
  freezeClock();
});
beforeEach(async () => {
  await runInDurableObject(mesh(), (_o, state) => state.storage.deleteAlarm());
});
afterAll(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

describe("kick()", () => {
  it("arms the alarm for now when none is set", async () => {
    await mesh().kick();
    expect(await alarmAt()).toBe(Date.now());
  });

  it("keeps an alarm that is already due", async () => {
    await setAlarm(Date.now() - 50);
    await mesh().kick();
    expect(await alarmAt()).toBe(Date.now() - 50);
  });

  it("brings a later alarm forward to now", async () => {
    await setAlarm(Date.now() + 5_000);
    await mesh().kick();
    expect(await alarmAt()).toBe(Date.now());
  });
});

describe("alarm()", () => {
  it("with an empty queue pushes nothing and re-arms nothing", async () => {
    await mesh().kick();
    expect(await runDurableObjectAlarm(mesh())).toBe(true);
    expect(await alarmAt()).toBeNull();
    expect(await getStatus()).toMatchObject({ pushVersion: 0, pendingPushes: 0 });
  });

  it("keeps an earlier alarm that a kick() set while the turn ran", async () => {
    const at = Date.now();
    expect((await ingest(events)).status).toBe(200);
    expect(await alarmAt()).toBe(at);
    // Called directly, the alarm set by the ingest's kick is still there: the turn would wait until
    // at + 100, but must not postpone what is already set for `at`.
    await runInDurableObject(mesh(), (object) => object.alarm());
    expect(await alarmAt()).toBe(at);
    expect(await runAlarmsUntilIdle()).toBe(2);
    expect(await getStatus()).toMatchObject({ pushVersion: 1, pendingPushes: 0 });
  });

  it("after a failed turn logs the failure and retries in 1s", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const at = Date.now();
    const corrupt = keys.pending(at, "corrupt");
    await runInDurableObject(mesh(), (object) => object.store.put(corrupt, { at }));
    await mesh().kick();
    expect(await runDurableObjectAlarm(mesh())).toBe(true);
    expect(await alarmAt()).toBe(at + 1000);
    expect(errors.mock.calls.map((c) => String(c[0]))).toEqual([
      expect.stringMatching(/\terror\tpush\tdebounce: turn failed, retrying: TypeError/),
    ]);

    await runInDurableObject(mesh(), (object) => object.store.delete(corrupt));
    advanceClockTo(at + 1000);
    expect(await runDurableObjectAlarm(mesh())).toBe(true);
    expect(await alarmAt()).toBeNull();
    errors.mockRestore();
  });
});
