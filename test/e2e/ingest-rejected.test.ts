/**
 * One bad object blocks nothing, through the real Node runtime (`npm start`'s process, real HTTP):
 * a ServiceEntry resync of 1,000 items, one of which Istio's rules refuse, stores and serves the
 * other 999, lists the refused one in the answer, in /debug/configz?rejected and in
 * pilot_total_rejected_configs, keeps serving the refused object's last valid version, and the
 * cluster still syncs. A request that is malformed as a whole is still refused whole.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serviceEntry } from "../unit/ingest/support/istio.ts";
import { event } from "./support/kube.ts";
import { type RunningControlPlane, startControlPlane } from "./support/runtime.ts";

let cp: RunningControlPlane;
const base = () => `http://127.0.0.1:${cp.port}`;
const auth = () => ({ authorization: `Bearer ${cp.token}`, "content-type": "application/json" });

const total = 1000;
const bad = 500;
const entry = (i: number, rv: string, spec: Record<string, unknown> = {}) =>
  serviceEntry(`se-${i}`, spec, { resourceVersion: rv });

async function resync(kind: string, items: unknown[], rv: string, watching: string): Promise<Response> {
  return fetch(`${base()}/v1/resync?cluster=Kubernetes&kind=${kind}&watching=${watching}`, {
    method: "POST",
    headers: auth(),
    body: JSON.stringify({ kind: `${kind}List`, metadata: { resourceVersion: rv }, items }),
  });
}

/** The cluster names REST-JSON CDS serves now. */
async function clusters(): Promise<string[]> {
  const res = await fetch(`${base()}/v3/discovery:clusters`, { method: "POST", headers: auth(), body: "{}" });
  const body = (await res.json()) as { resources?: { name: string }[] };
  return (body.resources ?? []).map((r) => r.name);
}

async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const v = await read();
    if (done(v)) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

beforeAll(async () => {
  cp = await startControlPlane({ PILOT_DEBOUNCE_AFTER: "10ms", PILOT_SYNC_TIMEOUT: "10m" });
});
afterAll(async () => {
  await cp?.stop();
});

describe("a resync with one refused object among 1,000", () => {
  it("stores and serves the 999, reports the one, keeps its last valid version, and syncs the cluster", async () => {
    const watching = "Service,EndpointSlice,ServiceEntry";
    // The refused object's earlier, valid version, as a watch event.
    expect((await cp.post([event("ADDED", entry(bad, "5"))])).status).toBe(200);

    const items = Array.from({ length: total }, (_, i) =>
      i === bad ? entry(i, "20", { resolution: "NONE_OF_THESE" }) : entry(i, "20"),
    );
    const res = await resync("ServiceEntry", items, "20", watching);
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { applied: number; rejected: Record<string, unknown>[] };
    expect(answer.applied).toBe(total - 1);
    expect(answer.rejected).toEqual([
      expect.objectContaining({
        index: bad,
        kind: "ServiceEntry",
        namespace: "default",
        name: `se-${bad}`,
        field: "spec.resolution",
      }),
    ]);

    // Not synced until every watched kind was resynced; then synced, with the refusal standing.
    const ready = async () => (await (await fetch(`${base()}/ready`)).json()) as { synced: boolean };
    expect((await ready()).synced).toBe(false);
    expect((await resync("Service", [], "20", watching)).status).toBe(200);
    expect((await ready()).synced).toBe(false);
    expect((await resync("EndpointSlice", [], "20", watching)).status).toBe(200);
    expect((await ready()).synced).toBe(true);

    // Served: all 1,000 hosts, the refused one from its earlier valid version.
    const served = await until(clusters, (c) => c.length >= total, `${total} clusters`);
    expect(served.filter((n) => /^outbound\|9080\|\|se-\d+\.example\.com$/.test(n))).toHaveLength(total);
    expect(served).toContain(`outbound|9080||se-${bad}.example.com`);

    const metrics = await (await fetch(`${base()}/metrics`, { headers: auth() })).text();
    expect(metrics).toMatch(/^pilot_total_rejected_configs\{type="ServiceEntry"\} 1$/m);
    // The list's 999 new objects count as informer adds, beside the earlier watch event's one.
    expect(metrics).toMatch(/^pilot_k8s_cfg_events\{type="ServiceEntry",event="add"\} 1000$/m);

    const configz = await fetch(`${base()}/debug/configz?rejected`, { headers: auth() });
    expect(await configz.json()).toEqual([
      expect.objectContaining({
        cluster: "Kubernetes",
        kind: "ServiceEntry",
        name: `se-${bad}`,
        resourceVersion: "20",
        field: "spec.resolution",
      }),
    ]);
    expect(cp.output()).toMatch(/ingest: skipped ServiceEntry default\/se-500 .*spec\.resolution/);

    // The same list again: nothing new is logged or counted, the refusal is reported as repeated.
    const again = (await (await resync("ServiceEntry", items, "20", watching)).json()) as {
      rejected: Record<string, unknown>[];
    };
    expect(again.rejected).toEqual([expect.objectContaining({ name: `se-${bad}`, repeated: true })]);
    expect(cp.output().match(/ingest: skipped ServiceEntry default\/se-500/g)).toHaveLength(1);

    // A valid version replaces the refused one: the refusal is gone from configz.
    expect((await cp.post([event("MODIFIED", entry(bad, "21"))])).status).toBe(200);
    const cleared = await fetch(`${base()}/debug/configz?rejected`, { headers: auth() });
    expect(await cleared.json()).toEqual([]);
  });

  it("a body that is no list is still refused whole", async () => {
    const res = await fetch(`${base()}/v1/resync?cluster=Kubernetes&kind=ServiceEntry`, {
      method: "POST",
      headers: auth(),
      body: JSON.stringify({ kind: "ServiceEntryList", items: "all of them" }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ field: "items" });
  });
});
