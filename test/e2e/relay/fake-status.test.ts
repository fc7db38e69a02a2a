/**
 * The fake API server's status subresource (fake-apiserver.ts), where it must behave as a real API
 * server for the relay's status writer to be tested against it: a PUT changes only `.status`, moves
 * the resourceVersion on and keeps generation; a stale resourceVersion is 409, an unknown object
 * 404; a watch sees the write as MODIFIED; the main resource never writes status; every PUT is
 * recorded.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type FakeApiServer, startFakeApiServer } from "./fake-apiserver.ts";
import { eventually } from "./receiver.ts";

let api: FakeApiServer;
afterEach(async () => {
  await api?.close();
});

const base = "/apis/gateway.networking.k8s.io/v1/namespaces/apps/httproutes";
const route = (spec: unknown = { parentRefs: [{ name: "gw" }] }) => ({
  metadata: { name: "r", namespace: "apps" },
  spec,
  status: { parents: [{ ignored: true }] },
});

/** What the fake answers a PUT: the object, or a Status. */
interface Answered {
  status?: unknown;
  spec?: unknown;
  reason?: string;
  metadata: { resourceVersion: string; generation?: number; labels?: unknown };
}

async function put(path: string, body: unknown) {
  const res = await fetch(`${api.url}${path}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Answered };
}

describe("fake API server: the status subresource", () => {
  it("PUT changes only status, moves resourceVersion, keeps generation; a watch sees MODIFIED", async () => {
    api = await startFakeApiServer();
    api.serveCrds(["v1"], ["httproutes"]);
    const created = api.apply("httproutes", route());
    // Created without status (the main resource does not write it), at generation 1.
    expect(created.status).toBeUndefined();
    expect(created.metadata.generation).toBe(1);

    const events: string[] = [];
    const ctl = new AbortController();
    const watch = await fetch(
      `${api.url}/apis/gateway.networking.k8s.io/v1/httproutes?watch=true&resourceVersion=${created.metadata.resourceVersion}`,
      {
        signal: ctl.signal,
      },
    );
    const reader = watch.body?.getReader();
    void (async () => {
      let buf = "";
      for (;;) {
        const chunk = await reader?.read().catch(() => undefined);
        if (!chunk || chunk.done) return;
        buf += new TextDecoder().decode(chunk.value);
        for (let i = buf.indexOf("\n"); i >= 0; i = buf.indexOf("\n")) {
          const e = JSON.parse(buf.slice(0, i)) as {
            type: string;
            object: { status?: unknown; metadata: { resourceVersion: string } };
          };
          events.push(`${e.type} ${e.object.metadata.resourceVersion} ${JSON.stringify(e.object.status)}`);
          buf = buf.slice(i + 1);
        }
      }
    })();

    const got = (await (await fetch(`${api.url}${base}/r`)).json()) as {
      metadata: { resourceVersion: string };
    };
    const rv = got.metadata.resourceVersion;
    const status = { parents: [{ controllerName: "istio.io/gateway-controller" }] };
    const written = await put(`${base}/r/status`, {
      ...got,
      spec: { parentRefs: [{ name: "changed" }] },
      metadata: { ...got.metadata, labels: { changed: "yes" } },
      status,
    });
    expect(written.status).toBe(200);
    expect(written.body.status).toEqual(status);
    expect(written.body.spec).toEqual({ parentRefs: [{ name: "gw" }] });
    expect(written.body.metadata.labels).toBeUndefined();
    expect(written.body.metadata.generation).toBe(1);
    expect(Number(written.body.metadata.resourceVersion)).toBeGreaterThan(Number(rv));
    await eventually("the MODIFIED event", () => events.length > 0);
    expect(events).toEqual([`MODIFIED ${written.body.metadata.resourceVersion} ${JSON.stringify(status)}`]);
    ctl.abort();

    // The same resourceVersion again is stale now.
    const stale = await put(`${base}/r/status`, { ...got, status: {} });
    expect(stale.status).toBe(409);
    expect(stale.body.reason).toBe("Conflict");
    // GET of the subresource is the object; a spec change moves generation on and keeps status.
    const again = (await (await fetch(`${api.url}${base}/r/status`)).json()) as { status: unknown };
    expect(again.status).toEqual(status);
    const updated = api.apply("httproutes", route({ parentRefs: [{ name: "other" }] }));
    expect(updated.metadata.generation).toBe(2);
    expect(updated.status).toEqual(status);
    expect(api.apply("httproutes", route({ parentRefs: [{ name: "other" }] })).metadata.generation).toBe(2);

    expect(api.statusWrites.map((w) => [w.name, w.resourceVersion, w.code])).toEqual([
      ["r", rv, 200],
      ["r", rv, 409],
    ]);
  });

  it("an unknown object is 404; a cluster-scoped kind is written without a namespace; no resourceVersion is unconditional", async () => {
    api = await startFakeApiServer();
    api.serveCrds(["v1"], ["gatewayclasses", "httproutes"]);
    const missing = await put(`${base}/nope/status`, {
      metadata: { name: "nope", namespace: "apps" },
      status: {},
    });
    expect(missing.status).toBe(404);
    api.apply("gatewayclasses", {
      metadata: { name: "istio" },
      spec: { controllerName: "istio.io/gateway-controller" },
    });
    const path = "/apis/gateway.networking.k8s.io/v1/gatewayclasses/istio/status";
    const ok = await put(path, { metadata: { name: "istio" }, status: { conditions: [] } });
    expect(ok.status).toBe(200);
    expect(ok.body.status).toEqual({ conditions: [] });
    // The main resource is not writable through the fake.
    expect(
      (await put("/apis/gateway.networking.k8s.io/v1/gatewayclasses/istio", { metadata: { name: "istio" } }))
        .status,
    ).toBe(405);
    expect(api.statusWrites.map((w) => [w.resource, w.namespace, w.code])).toEqual([
      ["httproutes", "apps", 404],
      ["gatewayclasses", undefined, 200],
    ]);
  });
});
