/** DeltaPollService on the Node runtime (the real child process): the shared suite over h2c and HTTP/1.1, JSON and binary. */
import { createClient } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeltaPollService } from "../../../lib/gen/edgepilot/xds/v1/poll_pb.ts";
import { type RunningControlPlane, startControlPlane } from "../support/runtime.ts";
import { TypeUrl } from "./scenario.ts";
import { describePollSuite, openWatch, pollRequest } from "./suite.ts";
import { applier, transports } from "./support.ts";

let cp: RunningControlPlane;
beforeAll(async () => {
  cp = await startControlPlane({ PILOT_DEBOUNCE_AFTER: "5ms" });
});
afterAll(async () => {
  await cp?.stop();
});

describePollSuite("Node", () => ({ transports: transports(cp), apply: applier(cp) }));

describe("shutdown", () => {
  it("SIGTERM ends open Watches (h2c and HTTP/1.1) and a waiting long poll, and the process exits 0", async () => {
    const t = transports(cp);
    const watches = ["h2c binary", "HTTP/1.1 JSON"].map((name) =>
      openWatch(createClient(DeltaPollService, t[name]!), pollRequest(TypeUrl.cluster, [])),
    );
    for (const w of watches) await w.next();
    const clusters = await createClient(DeltaPollService, t["h2c JSON"]!).poll(
      pollRequest(TypeUrl.cluster, []),
    );
    const held = Object.fromEntries(clusters.resources.map((r) => [r.name, r.version]));
    const waiting = createClient(DeltaPollService, t["h2c JSON"]!)
      .poll(pollRequest(TypeUrl.cluster, [], held, 30_000))
      .then((r) => r.resources.length, String);
    await new Promise((r) => setTimeout(r, 200)); // the poll is held by now (nothing else is pending)
    const ended = watches.map((w) =>
      w.next().then(
        () => "message",
        (e: unknown) => String(e),
      ),
    );
    const started = Date.now();
    expect(await cp.stop()).toBe(0);
    expect(Date.now() - started).toBeLessThan(1_900); // ended cleanly, not cut at the 2s grace
    expect(await Promise.all(ended)).toEqual(["Error: the Watch ended", "Error: the Watch ended"]);
    expect(await waiting).toBe(0);
  });
});
