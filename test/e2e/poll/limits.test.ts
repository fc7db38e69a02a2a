/** The limits on the Node runtime (the real child process), one budget across h2c and HTTP/1.1. */
import { afterAll, beforeAll } from "vitest";
import { type RunningControlPlane, startControlPlane } from "../support/runtime.ts";
import { describeLimitsSuite, testLimits } from "./limits-suite.ts";
import { applier, transports } from "./support.ts";

let cp: RunningControlPlane;
beforeAll(async () => {
  cp = await startControlPlane({ PILOT_DEBOUNCE_AFTER: "5ms", ...testLimits });
});
afterAll(async () => {
  await cp?.stop();
});

describeLimitsSuite("Node", () => {
  const t = transports(cp);
  return {
    transports: [t["h2c binary"]!, t["HTTP/1.1 JSON"]!],
    post: (path, body) =>
      fetch(`http://127.0.0.1:${cp.port}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      }),
    apply: applier(cp),
  };
});
