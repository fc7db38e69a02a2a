import { describe, expect, it } from "vitest";
import { readSyncz, syncStatusOf } from "../../../lib/debug/syncz.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { NODE, NOW, record, recordType } from "./builders.ts";

const sent = (v: string) => ({ versionInfo: v, nonce: `n-${v}`, versions: {} });

describe("syncStatusOf", () => {
  it.each([
    {
      name: "nothing sent: only the identity",
      rec: record(),
      want: {
        proxy: NODE,
        proxy_type: "sidecar",
        generator: "",
        connected_since: "2026-11-23T11:59:00.000Z",
        updated_at: "2026-11-23T12:00:00.000Z",
      },
    },
    {
      name: "sent and acked per type, cluster and Istio version from the node",
      rec: record({ cluster: "east", istioVersion: "1.24.0" }, [
        recordType({ sent: sent("c1"), ackedVersion: "c1" }),
        recordType({ typeUrl: TypeUrl.endpoint, wildcard: false, sent: sent("e2"), ackedVersion: "e1" }),
        recordType({ typeUrl: TypeUrl.listener, sent: sent("l1") }),
      ]),
      want: {
        cluster_id: "east",
        istio_version: "1.24.0",
        cluster_sent: "c1",
        cluster_acked: "c1",
        endpoint_sent: "e2",
        endpoint_acked: "e1",
        listener_sent: "l1",
      },
    },
    {
      name: "a NACK is listed with its message",
      rec: record({}, [
        recordType({ sent: sent("c2"), nack: { versionInfo: "c1", nonce: "n-c2", message: "bad" } }),
      ]),
      want: { nacks: [{ type_url: TypeUrl.cluster, nonce: "n-c2", version_info: "c1", message: "bad" }] },
    },
    {
      name: "a node id that is not Istio's has no proxy type",
      rec: record({ nodeId: "my-client" }),
      want: { proxy: "my-client", proxy_type: undefined },
    },
  ])("$name", ({ rec, want }) => {
    expect(syncStatusOf(rec)).toMatchObject(want);
  });
});

describe("readSyncz", () => {
  const store = createMemoryStore();
  const ids = ["a", "b", "c", "d"].map((x) => `sidecar~10.0.0.1~${x}.default~default.svc.cluster.local`);
  const seeded = Promise.all([
    ...ids.map((id) => store.put(keys.proxy(id), record({ nodeId: id }))),
    // Left by a process that died: expired, never shown.
    store.put(keys.proxy("zz-dead"), record({ nodeId: "zz-dead", expiresAt: NOW - 1 })),
  ]);

  it("pages live records in node id order, skipping expired ones", async () => {
    await seeded;
    const first = await readSyncz(store, { limit: 2, now: NOW });
    if (!first.ok) throw new Error(first.error);
    expect(first.value.items.map((r) => r.proxy)).toEqual(ids.slice(0, 2));
    expect(first.value.next).toBe(keys.proxy(ids[1] as string));
    const rest = await readSyncz(store, { limit: 10, cursor: first.value.next, now: NOW });
    if (!rest.ok) throw new Error(rest.error);
    expect(rest.value.items.map((r) => r.proxy)).toEqual(ids.slice(2));
    expect(rest.value.next).toBeUndefined();
  });

  it.each([
    { name: "a live proxy", proxyID: ids[0] as string, want: [ids[0]] },
    { name: "an expired one", proxyID: "zz-dead", want: [] },
    { name: "an unknown one", proxyID: "nobody", want: [] },
  ])("one proxy by id: $name", async ({ proxyID, want }) => {
    await seeded;
    const r = await readSyncz(store, { limit: 10, proxyID, now: NOW });
    expect(r.ok && r.value.items.map((x) => x.proxy)).toEqual(want);
  });

  it("refuses a cursor from another prefix", async () => {
    const r = await readSyncz(store, { limit: 10, cursor: "svc/x", now: NOW });
    expect(r).toEqual({ ok: false, error: expect.stringMatching(/cursor is not one this path returned/) });
  });
});
