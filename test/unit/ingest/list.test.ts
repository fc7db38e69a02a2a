import { describe, expect, it } from "vitest";
import { validateList } from "../../../lib/ingest/index.ts";

const item = (name: string, o: Record<string, unknown> = {}) => ({
  metadata: { name, namespace: "default", resourceVersion: "10" },
  spec: { ports: [{ port: 80 }] },
  ...o,
});

describe("validateList", () => {
  it("fills kind and apiVersion of items the way list responses leave them out", async () => {
    const r = await validateList("Service", {
      apiVersion: "v1",
      kind: "ServiceList",
      metadata: { resourceVersion: "42" },
      items: [item("a"), item("b")],
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.resourceVersion).toBe("42");
    expect(r.value.items.map((i) => [i.apiVersion, i.kind, i.metadata.name])).toEqual([
      ["v1", "Service", "a"],
      ["v1", "Service", "b"],
    ]);
  });

  it("lists an item its kind's rules refuse in rejected, with its index and field, and keeps the rest", async () => {
    const r = await validateList("Service", {
      items: [item("a"), item("b", { spec: { ports: [{ port: 70000 }] } }), item("c")],
    });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.items.map((i) => i.metadata.name)).toEqual(["a", "c"]);
    expect(r.value.rejected).toEqual([
      expect.objectContaining({ type: "REJECTED", index: 1, field: "spec.ports[0].port" }),
    ]);
  });

  it("reads the kinds its sender watches, known ones only, in table order", async () => {
    const r = await validateList("Service", { items: [] }, undefined, "Pod,Widget,Service,Pod,WorkloadEntry");
    expect(r.ok && r.value.watching).toEqual(["Service", "Pod", "WorkloadEntry"]);
  });

  const bad: [string, string, unknown, Record<string, unknown>][] = [
    ["unknown kind", "Widget", { items: [] }, { field: "kind", message: /cannot resync kind "Widget"/ }],
    [
      "list of another kind",
      "Service",
      { kind: "PodList", items: [] },
      { field: "kind", message: /not a ServiceList/ },
    ],
    ["no items", "Service", { kind: "ServiceList" }, { field: "items", message: /must be an array/ }],
    ["not an object", "Service", [], { message: /List object, got array/ }],
    [
      "item without a name",
      "Service",
      { items: [item("a"), { metadata: { namespace: "x" } }] },
      { index: 1, field: "items[1].metadata.name" },
    ],
    [
      "item of another kind",
      "Service",
      { items: [{ ...item("a"), kind: "Pod", apiVersion: "v1" }] },
      { index: 0, field: "items[0].kind" },
    ],
  ];
  for (const [name, kind, body, want] of bad) {
    it(`rejects ${name}`, async () => {
      const r = await validateList(kind, body);
      expect(r.ok).toBe(false);
      if (!r.ok) {
        const { message, ...rest } = want;
        expect(r.error).toMatchObject(rest);
        if (message) expect(r.error.message).toMatch(message as RegExp);
      }
    });
  }
});
