/**
 * The xDS type descriptors hold together: each names its own schema, a real Fetch method and a
 * unique REST path, has a generator, pushes in Envoy's order (CDS, EDS, LDS, RDS) and removes so that
 * nothing a proxy keeps ever refers to something already gone. What is derived from them (TypeUrl,
 * syncz fields, proxy-status columns) follows the list, also for a type without a column.
 */
import { describe, expect, it } from "vitest";
import { statusColumns, statusTable } from "../../../lib/debug/status-table.ts";
import { syncStatusOf } from "../../../lib/debug/syncz.ts";
import { generatorFor } from "../../../lib/resources/generators/index.ts";
import {
  pushOrder,
  removalOrder,
  TypeUrl,
  type XdsType,
  xdsType,
  xdsTypes,
} from "../../../lib/resources/xds-types.ts";
import { restPaths } from "../../../lib/xds/rest.ts";
import { record, recordType } from "../debug/builders.ts";

describe("xDS type descriptors", () => {
  it.each(
    xdsTypes.map((t) => [t.short, t] as const),
  )("%s names its own schema, Fetch method and generator", (_, t) => {
    expect(t.typeUrl).toBe(`type.googleapis.com/${t.schema.typeName}`);
    expect(TypeUrl[t.short]).toBe(t.typeUrl);
    expect(t.fetch.service.method[t.fetch.method as keyof typeof t.fetch.service.method]).toBeDefined();
    expect(generatorFor(t.typeUrl)?.typeUrl).toBe(t.typeUrl);
    expect(restPaths[t.restPath]).toBe(t.typeUrl);
    expect(xdsType(t.typeUrl)).toBe(t);
  });

  it("keeps names, columns and paths unique", () => {
    const types: readonly XdsType[] = xdsTypes;
    const picks: ((t: XdsType) => unknown)[] = [
      (t) => t.typeUrl,
      (t) => t.short,
      (t) => t.metric,
      (t) => t.removalRank,
      (t) => t.restPath,
      (t) => t.dump.type,
    ];
    for (const pick of picks) expect(new Set(types.map(pick)).size).toBe(types.length);
    const columns = types.flatMap((t) => (t.column ? [t.column] : []));
    expect(new Set(columns.map((c) => c.name)).size).toBe(columns.length);
    expect(new Set(columns.map((c) => c.rank)).size).toBe(columns.length);
  });

  it("keys TypeUrl by short name, one entry per descriptor", () => {
    expect(Object.entries(TypeUrl)).toEqual(xdsTypes.map((t) => [t.short, t.typeUrl]));
  });

  it("gives every served type its syncz fields, named by its short name", () => {
    const sent = (v: string) => ({ versionInfo: v, nonce: `n-${v}`, versions: {} });
    const types = xdsTypes.map((t) =>
      recordType({ typeUrl: t.typeUrl, sent: sent(t.metric), ackedVersion: "a" }),
    );
    const status: Record<string, unknown> = { ...syncStatusOf(record({}, types)) };
    for (const t of xdsTypes) {
      expect(status[`${t.short}_sent`]).toBe(t.metric);
      expect(status[`${t.short}_acked`]).toBe("a");
    }
  });

  it("shows istioctl's proxy-status columns, leaving out a type without one", () => {
    const header = statusTable([], "i").trimEnd().split(/ +/);
    expect(header).toEqual(["NAME", "CLUSTER", "CDS", "LDS", "EDS", "RDS", "ISTIOD", "VERSION"]);
    const served: readonly XdsType[] = xdsTypes;
    const { column: _, ...rest } = xdsTypes[0];
    const columnless: XdsType = { ...rest, short: "columnless", typeUrl: "type.googleapis.com/x.Y" };
    expect(statusColumns([...served, columnless])).toEqual(statusColumns(served));
    const columned = served.filter((t) => t.column).map((t) => t.typeUrl);
    expect(statusColumns(served).map(([, , typeUrl]) => typeUrl)).toEqual(expect.arrayContaining(columned));
    expect(statusColumns(served)).toHaveLength(columned.length);
  });

  it("pushes in Envoy's order and removes referrers before what they refer to", () => {
    for (const t of xdsTypes)
      if ("refersTo" in t)
        expect(removalOrder.indexOf(t.typeUrl)).toBeLessThan(removalOrder.indexOf(t.refersTo));
    expect(pushOrder).toEqual([
      TypeUrl.cluster,
      TypeUrl.endpoint,
      TypeUrl.listener,
      TypeUrl.route,
      TypeUrl.secret,
    ]);
    expect(removalOrder).toEqual([
      TypeUrl.listener,
      TypeUrl.route,
      TypeUrl.cluster,
      TypeUrl.endpoint,
      TypeUrl.secret,
    ]);
  });

  it("answers undefined for a type it does not serve", () => {
    expect(xdsType("type.googleapis.com/envoy.service.runtime.v3.Runtime")).toBeUndefined();
  });
});
