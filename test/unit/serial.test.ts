/** lib/serial.ts: calls run one at a time in the order given; a failure reaches its own caller only. */
import { describe, expect, it } from "vitest";
import { createSerial } from "../../lib/serial.ts";

/** A call that records when it starts and ends and waits for `release` in between. */
function gated(name: string, events: string[], fail = false) {
  let release = () => {};
  const released = new Promise<void>((r) => {
    release = r;
  });
  const fn = async () => {
    events.push(`start ${name}`);
    await released;
    events.push(`end ${name}`);
    if (fail) throw new Error(`${name} failed`);
    return name;
  };
  return { fn, release };
}

describe("createSerial", () => {
  it("starts each call only after the previous one settled, in the order given", async () => {
    const serial = createSerial();
    const events: string[] = [];
    const a = gated("a", events);
    const b = gated("b", events);
    const pa = serial(a.fn);
    const pb = serial(b.fn);
    await Promise.resolve();
    expect(events).toEqual(["start a"]);
    b.release();
    a.release();
    expect(await Promise.all([pa, pb])).toEqual(["a", "b"]);
    expect(events).toEqual(["start a", "end a", "start b", "end b"]);
  });

  it("hands a failure to its caller only; the next call still runs", async () => {
    const serial = createSerial();
    const events: string[] = [];
    const a = gated("a", events, true);
    const b = gated("b", events);
    const pa = serial(a.fn);
    const pb = serial(b.fn);
    a.release();
    b.release();
    await expect(pa).rejects.toThrow("a failed");
    expect(await pb).toBe("b");
    expect(events).toEqual(["start a", "end a", "start b", "end b"]);
  });
});

describe("createSerial idle", () => {
  it("is idle only when no call is queued or running", async () => {
    const serial = createSerial();
    const events: string[] = [];
    expect(serial.idle).toBe(true);
    const a = gated("a", events);
    const b = gated("b", events, true);
    const pa = serial(a.fn);
    const pb = serial(b.fn);
    expect(serial.idle).toBe(false);
    a.release();
    await pa;
    expect(serial.idle).toBe(false);
    b.release();
    await expect(pb).rejects.toThrow("b failed");
    await Promise.resolve();
    expect(serial.idle).toBe(true);
  });
});
