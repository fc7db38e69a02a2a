/**
 * /debug/authorizationz and /debug/configz?mtls over a memory store: the policies that apply to one
 * connected proxy (its namespace from its node id, its labels from its pod), by action and oldest
 * first, with its effective mTLS; every pod's effective mTLS, paged; a proxy not connected is 404.
 */
import { describe, expect, it } from "vitest";
import { readAuthorizationz, readWorkloadMtls } from "../../../lib/debug/workload-security.ts";
import type { PodInfo } from "../../../lib/registry/kube/records.ts";
import { keys } from "../../../lib/store/keys.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { config, NODE, NOW, record } from "./builders.ts";

const pod = (o: Partial<PodInfo> = {}): PodInfo => ({
  namespace: "default",
  name: "client-7d9f",
  ips: ["10.1.0.9"],
  labels: { app: "client" },
  serviceAccount: "client",
  nodeName: "node-1",
  terminating: false,
  ...o,
});

const policy = (
  kind: "PeerAuthentication" | "AuthorizationPolicy",
  namespace: string,
  name: string,
  spec: unknown,
  created: string,
) => ({
  ...config({ kind, namespace, name, spec }),
  creationTimestamp: created,
});

async function seeded() {
  const store = createMemoryStore();
  const put = (c: ReturnType<typeof policy>) =>
    store.put(keys.config(c.kind, c.namespace, c.name, "east"), c);
  await store.put(keys.proxy(NODE), record({ cluster: "east" }));
  await store.put(keys.pod("east", "default", "client-7d9f"), pod());
  await store.put(
    keys.pod("east", "default", "server-1"),
    pod({ name: "server-1", labels: { app: "server" } }),
  );
  await store.put(
    keys.pod("east", "prod", "db-0"),
    pod({ namespace: "prod", name: "db-0", labels: { app: "db" } }),
  );
  await put(
    policy(
      "PeerAuthentication",
      "istio-system",
      "default",
      { mtls: { mode: "STRICT" } },
      "2026-01-01T00:00:00Z",
    ),
  );
  await put(
    policy(
      "PeerAuthentication",
      "default",
      "server-ports",
      {
        selector: { matchLabels: { app: "server" } },
        mtls: {},
        portLevelMtls: { "8080": { mode: "DISABLE" } },
      },
      "2026-01-02T00:00:00Z",
    ),
  );
  await put(
    policy(
      "AuthorizationPolicy",
      "default",
      "deny-newer",
      { action: "DENY", rules: [{}] },
      "2026-01-05T00:00:00Z",
    ),
  );
  await put(
    policy(
      "AuthorizationPolicy",
      "default",
      "deny-older",
      { action: "DENY", rules: [{}] },
      "2026-01-03T00:00:00Z",
    ),
  );
  await put(
    policy(
      "AuthorizationPolicy",
      "default",
      "allow-client",
      {
        selector: { matchLabels: { app: "client" } },
        rules: [{ from: [{ source: { namespaces: ["default"] } }] }],
      },
      "2026-01-04T00:00:00Z",
    ),
  );
  await put(
    policy(
      "AuthorizationPolicy",
      "default",
      "allow-server",
      { selector: { matchLabels: { app: "server" } } },
      "2026-01-04T00:00:00Z",
    ),
  );
  await put(
    policy(
      "AuthorizationPolicy",
      "istio-system",
      "ext-authz",
      { action: "CUSTOM", provider: { name: "ext" }, rules: [{}] },
      "2026-01-01T00:00:00Z",
    ),
  );
  await put(
    policy(
      "AuthorizationPolicy",
      "prod",
      "audit-prod",
      { action: "AUDIT", rules: [{}] },
      "2026-01-01T00:00:00Z",
    ),
  );
  return store;
}

describe("/debug/authorizationz", () => {
  it("lists the policies that apply to the proxy, by action and oldest first, and its effective mTLS", async () => {
    const r = await readAuthorizationz(await seeded(), { proxyID: NODE, now: NOW });
    if (!r.ok) throw new Error(r.error);
    const names = Object.fromEntries(
      Object.entries(r.body.authorization_policies).map(([action, list]) => [
        action,
        list.map((p) => `${p.namespace}/${p.name}`),
      ]),
    );
    expect(names).toEqual({
      custom: ["istio-system/ext-authz"],
      deny: ["default/deny-older", "default/deny-newer"],
      allow: ["default/allow-client"],
      audit: [],
    });
    expect(r.body).toMatchObject({
      proxy: NODE,
      workload: {
        namespace: "default",
        labels: { app: "client" },
        pod: "default/client-7d9f",
        cluster: "east",
      },
      root_namespace: "istio-system",
      mtls: { mode: "STRICT" },
    });
    expect(r.body.authorization_policies.allow[0]?.rules).toEqual([
      { from: [{ source: { namespaces: ["default"] } }] },
    ]);
  });

  it("selects by namespace alone when the proxy's pod is not known", async () => {
    const store = await seeded();
    await store.delete(keys.pod("east", "default", "client-7d9f"));
    const r = await readAuthorizationz(store, { proxyID: NODE, now: NOW });
    if (!r.ok) throw new Error(r.error);
    expect(r.body.workload).toEqual({ namespace: "default", labels: {}, cluster: "east" });
    expect(r.body.authorization_policies.allow).toEqual([]);
  });

  it.each([
    ["no record", undefined, /no live status record/],
    ["an expired record", record({ expiresAt: NOW }), /no live status record/],
    ["a node id that is not Istio's", record({ nodeId: "grpc-client-1" }), /not an Istio node id/],
  ])("refuses %s", async (_, rec, message) => {
    const store = createMemoryStore();
    if (rec) await store.put(keys.proxy(NODE), rec);
    const r = await readAuthorizationz(store, { proxyID: NODE, now: NOW });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(message);
  });
});

describe("/debug/configz?mtls", () => {
  it("gives every pod its effective mTLS, per port where a workload policy says, paged", async () => {
    const store = await seeded();
    const first = await readWorkloadMtls(store, { limit: 2 });
    if (!first.ok) throw new Error(first.error);
    expect(first.value.items).toEqual([
      { cluster: "east", namespace: "default", name: "client-7d9f", mtls: { mode: "STRICT" } },
      {
        cluster: "east",
        namespace: "default",
        name: "server-1",
        mtls: { mode: "STRICT", per_port: { 8080: "DISABLE" } },
      },
    ]);
    const rest = await readWorkloadMtls(store, {
      limit: 2,
      ...(first.value.next && { cursor: first.value.next }),
    });
    if (!rest.ok) throw new Error(rest.error);
    expect(rest.value.items).toEqual([
      { cluster: "east", namespace: "prod", name: "db-0", mtls: { mode: "STRICT" } },
    ]);
    expect(rest.value.next).toBeUndefined();
  });

  it("says PERMISSIVE where no policy applies", async () => {
    const store = createMemoryStore();
    await store.put(keys.pod("east", "default", "client-7d9f"), pod());
    const r = await readWorkloadMtls(store, { limit: 10 });
    expect(r.ok && r.value.items.map((i) => i.mtls)).toEqual([{ mode: "PERMISSIVE" }]);
  });
});
