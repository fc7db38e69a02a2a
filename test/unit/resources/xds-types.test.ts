/**
 * The xDS type descriptors hold together: each names its own schema, a real Fetch method and a
 * unique REST path, has a generator, pushes in Envoy's order (CDS, EDS, LDS, RDS) and removes so that
 * nothing a proxy keeps ever refers to something already gone.
 */
import { describe, expect, it } from "vitest";
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
      (t) => t.column.name,
      (t) => t.column.rank,
      (t) => t.removalRank,
      (t) => t.restPath,
      (t) => t.dump.type,
    ];
    for (const pick of picks) expect(new Set(types.map(pick)).size).toBe(types.length);
  });

  it("pushes in Envoy's order and removes referrers before what they refer to", () => {
    for (const t of xdsTypes)
      if ("refersTo" in t)
        expect(removalOrder.indexOf(t.typeUrl)).toBeLessThan(removalOrder.indexOf(t.refersTo));
    expect(pushOrder).toEqual([TypeUrl.cluster, TypeUrl.endpoint, TypeUrl.listener, TypeUrl.route]);
    expect(removalOrder).toEqual([TypeUrl.listener, TypeUrl.route, TypeUrl.cluster, TypeUrl.endpoint]);
  });

  it("answers undefined for a type it does not serve", () => {
    expect(xdsType("type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret")).toBeUndefined();
  });
});
