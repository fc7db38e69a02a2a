/**
 * Gateway Secrets through ingest over the memory store: the types and key layouts istiod's
 * credentials controller reads (kubernetes.io/tls and Opaque; tls.crt/tls.key or cert/key; a CA
 * alone), refused per object otherwise with a message naming the key, never its content; a key
 * that is not its certificate's or a certificate not valid now is not applied (the last good one
 * stays); a change is a non-Full push naming the Secret only; nothing of it in the object record.
 */
import { beforeEach, describe, expect, it } from "vitest";
import {
  applyEvents,
  defaultRegistryOptions,
  validateEvent,
  type WatchEvent,
} from "../../../lib/ingest/index.ts";
import { readQueue } from "../../../lib/push/queue.ts";
import type { StoredSecret } from "../../../lib/registry/kube/secret-store.ts";
import { keys, listAll, type Store } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { b64, day, now, secretObject, servingPair } from "../registry/kube/secret-builders.ts";

let store: Store;
const pair = await servingPair();
const other = await servingPair("other.example.com");

const screen = (type: string, object: unknown): WatchEvent => {
  const r = validateEvent({ type, object });
  if (!r.ok) throw new Error(`${r.error.field}: ${r.error.message}`);
  return r.value;
};
const apply = (...events: WatchEvent[]) =>
  applyEvents({ store, registry: defaultRegistryOptions, now: () => now }, "east", events);
const stored = async (ns: string, name: string) =>
  (await store.get<StoredSecret>(keys.secret("east", ns, name)))?.value;
async function drain() {
  const q = await readQueue(store);
  for (const i of q) await store.delete(i.key);
  return q.map((i) => ({
    full: i.request.full,
    configs: i.request.configsUpdated,
    reasons: i.request.reasons,
  }));
}

beforeEach(() => {
  store = createMemoryStore();
});

describe("which Secrets a gateway's credentials are read from (istiod's credentials controller)", () => {
  const cases: { name: string; object: Record<string, unknown>; field?: string; message?: RegExp }[] = [
    {
      name: "kubernetes.io/tls with tls.crt and tls.key",
      object: secretObject("c", "ingress", { "tls.crt": pair.cert, "tls.key": pair.key }),
    },
    {
      name: "Opaque with cert and key",
      object: secretObject("c", "ingress", { cert: pair.cert, key: pair.key }, "Opaque"),
    },
    {
      name: "no type (Opaque) with a CA only",
      object: { ...secretObject("c-cacert", "ingress", { "ca.crt": pair.cert }), type: undefined },
    },
    {
      name: "a service-account token",
      object: secretObject("t", "ingress", { token: "x" }, "kubernetes.io/service-account-token"),
      field: "type",
      message:
        /"kubernetes.io\/service-account-token": gateway credentials are read from kubernetes.io\/tls or Opaque Secrets only/,
    },
    {
      name: "a docker config",
      object: secretObject("d", "ingress", { ".dockerconfigjson": "{}" }, "kubernetes.io/dockerconfigjson"),
      field: "type",
      message: /only/,
    },
    {
      name: "no expected key",
      object: secretObject("c", "ingress", { username: "u", password: "p" }, "Opaque"),
      field: "data",
      message: /didn't have expected keys .* found: "password", "username"$/,
    },
    {
      name: "empty tls.crt and tls.key",
      object: secretObject("c", "ingress", { "tls.crt": "", "tls.key": "" }),
      field: "data",
      message: /found keys "tls.crt" and "tls.key", but they were empty/,
    },
    {
      name: "a value that is not base64",
      object: { ...secretObject("c", "ingress", {}), data: { "tls.crt": "***", "tls.key": "a" } },
      field: 'data["tls.crt"]',
      message: /base64/,
    },
    {
      name: "a certificate that is no PEM",
      object: secretObject("c", "ingress", { "tls.crt": "hello", "tls.key": pair.key }),
      field: 'data["tls.crt"]',
      message: /no PEM CERTIFICATE/,
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      const e = screen("ADDED", c.object);
      if (c.field === undefined) expect(e.type).toBe("ADDED");
      else {
        expect(e).toMatchObject({ type: "REJECTED", field: c.field });
        expect((e as { message: string }).message).toMatch(c.message as RegExp);
        // The message names keys, never a value.
        expect((e as { message: string }).message).not.toContain("BEGIN");
      }
    });
});

describe("gateway Secret ingest", () => {
  it("stores the material and queues a non-Full push naming the Secret only", async () => {
    const s = await apply(
      screen("ADDED", secretObject("cert", "ingress", { "tls.crt": pair.cert, "tls.key": pair.key })),
    );
    expect(s).toMatchObject({ applied: 1, rejected: [] });
    const got = await stored("ingress", "cert");
    expect(got?.material.certKey).toMatchObject({
      cert: b64(pair.cert),
      key: b64(pair.key),
      from: ["tls.crt", "tls.key"],
    });
    expect(await drain()).toEqual([
      { full: false, configs: ["Secret/ingress/cert"], reasons: { secret: 1 } },
    ]);
    // What ingest remembers of the object holds none of it.
    for (const e of await listAll(store, keys.objects()))
      expect(JSON.stringify(e.value)).not.toContain(b64(pair.key));
  });

  it("an update with the same content pushes nothing; a rotation pushes; a delete removes and pushes", async () => {
    await apply(
      screen(
        "ADDED",
        secretObject(
          "cert",
          "ingress",
          { "tls.crt": pair.cert, "tls.key": pair.key },
          "kubernetes.io/tls",
          "1",
        ),
      ),
    );
    await drain();
    await apply(
      screen(
        "MODIFIED",
        secretObject(
          "cert",
          "ingress",
          { "tls.crt": pair.cert, "tls.key": pair.key },
          "kubernetes.io/tls",
          "2",
        ),
      ),
    );
    expect(await drain()).toEqual([]);
    await apply(
      screen(
        "MODIFIED",
        secretObject(
          "cert",
          "ingress",
          { "tls.crt": other.cert, "tls.key": other.key },
          "kubernetes.io/tls",
          "3",
        ),
      ),
    );
    expect(await drain()).toHaveLength(1);
    expect((await stored("ingress", "cert"))?.material.certKey?.cert).toBe(b64(other.cert));
    await apply(
      screen(
        "DELETED",
        secretObject(
          "cert",
          "ingress",
          { "tls.crt": other.cert, "tls.key": other.key },
          "kubernetes.io/tls",
          "4",
        ),
      ),
    );
    expect(await stored("ingress", "cert")).toBeUndefined();
    expect(await drain()).toEqual([
      { full: false, configs: ["Secret/ingress/cert"], reasons: { secret: 1 } },
    ]);
  });

  it("a key that is not the certificate's is not applied: the last good one stays, the answer names the key", async () => {
    await apply(
      screen(
        "ADDED",
        secretObject(
          "cert",
          "ingress",
          { "tls.crt": pair.cert, "tls.key": pair.key },
          "kubernetes.io/tls",
          "1",
        ),
      ),
    );
    await drain();
    const s = await apply(
      screen(
        "MODIFIED",
        secretObject(
          "cert",
          "ingress",
          { "tls.crt": pair.cert, "tls.key": other.key },
          "kubernetes.io/tls",
          "2",
        ),
      ),
    );
    expect(s.unsupported).toEqual([
      'Secret ingress/cert: data["tls.key"] does not match the certificate of data["tls.crt"] (not applied)',
    ]);
    expect((await stored("ingress", "cert"))?.material.certKey?.key).toBe(b64(pair.key));
    expect(await drain()).toEqual([]);
  });

  it("an expired or not yet valid certificate is not applied", async () => {
    const expired = await servingPair("old.example.com", now - 100 * day, 10);
    const s = await apply(
      screen("ADDED", secretObject("old", "ingress", { "tls.crt": expired.cert, "tls.key": expired.key })),
    );
    expect(s.unsupported?.[0]).toMatch(
      /^Secret ingress\/old: data\["tls.crt"\] certificate 1 is expired or not yet valid/,
    );
    expect(await stored("ingress", "old")).toBeUndefined();
    const future = await servingPair("new.example.com", now + day, 10);
    await apply(
      screen("ADDED", secretObject("new", "ingress", { cert: future.cert, key: future.key }, "Opaque")),
    );
    expect(await stored("ingress", "new")).toBeUndefined();
  });
});
