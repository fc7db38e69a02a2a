/** Status lists: whole and sorted in status(), cut with their counts in what onStatus reports. */
import { describe, expect, it } from "vitest";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { proxyRecord, recordBounds } from "../../../lib/xds/proxy-record.ts";
import { statusLists } from "../../../lib/xds/status-lists.ts";
import { ack, harness, req } from "./delta-harness.ts";

const names = (n: number) => Array.from({ length: n }, (_, i) => `n${String(n - i).padStart(3, "0")}`);

describe("statusLists", () => {
  const cases = [
    { what: "no bound", size: 40, bound: undefined, listed: 40, counted: false },
    { what: "under the bound", size: 3, bound: 16, listed: 3, counted: false },
    { what: "at the bound", size: 16, bound: 16, listed: 16, counted: false },
    { what: "over the bound", size: 40, bound: 16, listed: 16, counted: true },
  ];
  it.each(cases)("$what: lists $listed of $size", ({ size, bound, listed, counted }) => {
    const all = names(size);
    const out = statusLists(new Set(all), new Map(all.map((n) => [n, "v"])), bound);
    expect(out.subscribed).toHaveLength(listed);
    expect(Object.keys(out.versions ?? {})).toHaveLength(listed);
    expect(out.subscribedCount).toBe(counted ? size : undefined);
    expect(out.sentCount).toBe(counted ? size : undefined);
    if (!counted) expect(out.subscribed).toEqual([...all].sort());
  });
});

describe("a Delta stream's reported status", () => {
  it("cuts the lists of a large subscription and counts them; status() still lists everything", async () => {
    const h = harness();
    const all = names(40);
    for (const n of all) await h.publish(TypeUrl.endpoint, n);
    const [r] = await h.session.onRequest(req({ typeUrl: TypeUrl.endpoint, resourceNamesSubscribe: all }));
    await h.session.onRequest(ack(r));
    const reported = h.statuses.at(-1)?.types[0];
    expect(reported?.subscribed).toHaveLength(recordBounds.names);
    expect(reported?.subscribedCount).toBe(40);
    expect(reported?.sentCount).toBe(40);
    const record = proxyRecord(h.statuses.at(-1) ?? { nodeId: "", generator: "", types: [] }, {
      streamId: "s",
      now: 0,
    });
    expect(record.types[0]).toMatchObject({ subscribedCount: 40, sentCount: 40 });
    const full = h.session.status().types[0];
    expect(full?.subscribed).toEqual([...all].sort());
    expect(Object.keys(full?.sent?.versions ?? {})).toHaveLength(40);
    expect(full?.subscribedCount).toBeUndefined();
  });
});
