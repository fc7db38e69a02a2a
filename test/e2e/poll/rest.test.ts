/** REST-JSON xDS on the Node runtime's PORT (the real child process): the shared suite. */
import { afterAll, beforeAll } from "vitest";
import { type RunningControlPlane, startControlPlane } from "../support/runtime.ts";
import { describeRestSuite } from "./rest-suite.ts";
import { applier } from "./support.ts";

let cp: RunningControlPlane;
beforeAll(async () => {
  cp = await startControlPlane({ PILOT_DEBOUNCE_AFTER: "5ms" });
});
afterAll(async () => {
  await cp?.stop();
});

describeRestSuite("Node", () => ({
  post: (path, body) =>
    fetch(`http://127.0.0.1:${cp.port}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    }),
  apply: applier(cp),
}));
