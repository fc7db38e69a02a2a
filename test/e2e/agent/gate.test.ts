/**
 * The agent's local sync gate opening wakes its local sessions, as the server's gate does: an upstream
 * whose mesh is synced and empty answers the agent's wildcard CDS with nothing, which changes no cache
 * entry; a local SotW proxy asking for every cluster must still be answered (an empty list: there is
 * nothing), not held until some later change. A real Node edgepilot upstream, the agent in this process.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningAgent, startAgent } from "../../../functions/node/agent-runtime.ts";
import { listOf, resync } from "../restart/support.ts";
import { openAds } from "../support/ads-client.ts";
import { type RunningControlPlane, startControlPlane } from "../support/runtime.ts";
import { CDS } from "./support.ts";

let cp: RunningControlPlane;
let agent: RunningAgent;

beforeAll(async () => {
  cp = await startControlPlane({ PILOT_SYNC_TIMEOUT: "5m", PILOT_DEBOUNCE_AFTER: "10ms" });
  // Synced and empty: a resync of Services and of EndpointSlices, each with no items.
  await resync(cp, "Service", listOf("ServiceList", []));
  await resync(cp, "EndpointSlice", listOf("EndpointSliceList", []));
  agent = await startAgent(
    {
      upstream: `http://127.0.0.1:${cp.xdsPort}`,
      tokenFile: undefined,
      namespace: "default",
      port: 0,
      socket: undefined,
      readyPort: 0,
    },
    { log: () => {}, backoff: { initialMs: 100, maxMs: 800 } },
  );
});

afterAll(async () => {
  await agent?.stop();
  await cp?.stop();
});

const LDS = "type.googleapis.com/envoy.config.listener.v3.Listener";
const node = {
  id: "sidecar~127.0.0.9~empty.default~default.svc.cluster.local",
  metadata: { GENERATOR: "grpc" },
};

describe("edgepilot agent: its local sync gate", () => {
  it("answers a local SotW wildcard CDS once the upstream answered it with nothing", async () => {
    const ads = openAds(agent.port);
    ads.send({ node, typeUrl: CDS });
    const first = await ads.next(10_000);
    expect(ads.error()).toBe("");
    expect(first?.typeUrl).toBe(CDS);
    expect(first?.resources).toEqual([]);
    ads.close();
  });

  it("answers a Listener asked for that does not exist once every type asked for was answered upstream", async () => {
    const ads = openAds(agent.port);
    // The missing Listener first: its answer is held until the gate opens, which the empty CDS
    // answer (no cache change) opens last.
    ads.send({ node, typeUrl: LDS, resourceNames: ["nosuch.default.svc.cluster.local:80"] });
    ads.send({ typeUrl: CDS });
    const seen: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await ads.next(10_000);
      if (r) seen.push(`${r.typeUrl.split(".").at(-1)}:${r.resources.length}`);
    }
    expect(ads.error()).toBe("");
    expect(seen.sort()).toEqual(["Cluster:0", "Listener:0"]);
    ads.close();
  });
});
