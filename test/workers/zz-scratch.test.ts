import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { expect, it, vi } from "vitest";

it("scratch", async () => {
  const r = await exports.default.fetch("http://w/ready");
  console.log("ready", r.status, await r.text());
  console.log("token", env.EDGEPILOT_TOKEN, env.PILOT_DEBOUNCE_AFTER);
  const real = Date.now();
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(real + 86_400_000);
  const stub = env.MESH.getByName("mesh");
  const inside = await runInDurableObject(stub, () => Date.now());
  console.log("fake in DO?", inside - real);
  await stub.kick();
  const at = await runInDurableObject(stub, (_o, s) => s.storage.getAlarm());
  console.log("alarm at", (at ?? 0) - real);
  console.log("ran", await runDurableObjectAlarm(stub));
  vi.useRealTimers();
  expect(1).toBe(1);
});
