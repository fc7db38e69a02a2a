/** pollDelta: one stateless delta from what a request subscribes to and holds; and what it refuses. */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { DiscoveryRequestSchema } from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { StatusSchema } from "../../../lib/gen/google/rpc/status_pb.ts";
import { setVersion } from "../../../lib/resources/version.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { fetchDiscovery } from "../../../lib/xds/fetch.ts";
import { pollDelta } from "../../../lib/xds/poll.ts";
import { maxPollWaitMs, readPollRequest } from "../../../lib/xds/poll-request.ts";
import { CDS, EDS, mutableSource, pollRequest, res, summary } from "./poll-support.ts";

const store = () =>
  mutableSource([
    res(CDS, "a", "1"),
    res(CDS, "b", "1"),
    res(CDS, "c", "1"),
    res(EDS, "a", "7"),
    res(EDS, "b", "7"),
  ]).source;

async function poll(typeUrl: string, names: string[], held: Record<string, string> = {}) {
  const r = await pollDelta(
    store(),
    pollRequest(typeUrl, { resourceNamesSubscribe: names, initialResourceVersions: held }),
  );
  if (r.kind !== "ok") throw new Error(r.message);
  return r.response;
}

describe("pollDelta", () => {
  const cases: {
    name: string;
    typeUrl: string;
    names: string[];
    held?: Record<string, string>;
    want: { resources: Record<string, string>; removed: string[] };
  }[] = [
    {
      name: "a first poll gets everything it subscribes to",
      typeUrl: EDS,
      names: ["a", "b"],
      want: { resources: { a: "7", b: "7" }, removed: [] },
    },
    {
      name: "current versions: an empty delta",
      typeUrl: EDS,
      names: ["a", "b"],
      held: { a: "7", b: "7" },
      want: { resources: {}, removed: [] },
    },
    {
      name: "one stale version: exactly that resource",
      typeUrl: EDS,
      names: ["a", "b"],
      held: { a: "6", b: "7" },
      want: { resources: { a: "7" }, removed: [] },
    },
    {
      name: "held but gone: removed",
      typeUrl: EDS,
      names: ["a", "gone"],
      held: { a: "7", gone: "1" },
      want: { resources: {}, removed: ["gone"] },
    },
    {
      name: "subscribed but never existed: removed, so the client knows",
      typeUrl: EDS,
      names: ["a", "nope"],
      held: { a: "7" },
      want: { resources: {}, removed: ["nope"] },
    },
    {
      name: "held but not subscribed: none of this request's business",
      typeUrl: EDS,
      names: ["a"],
      held: { a: "7", b: "1", zz: "1" },
      want: { resources: {}, removed: [] },
    },
    {
      name: "no names on CDS: the wildcard",
      typeUrl: CDS,
      names: [],
      held: { a: "1", gone: "1" },
      want: { resources: { b: "1", c: "1" }, removed: ["gone"] },
    },
    {
      name: '"*" plus a name that does not exist',
      typeUrl: CDS,
      names: ["*", "nope"],
      want: { resources: { a: "1", b: "1", c: "1" }, removed: ["nope"] },
    },
    {
      name: "no names on EDS: no wildcard there, so nothing",
      typeUrl: EDS,
      names: [],
      held: { a: "1" },
      want: { resources: {}, removed: [] },
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      expect(summary(await poll(c.typeUrl, c.names, c.held))).toEqual(c.want);
    });
  }

  it("packs each resource as Resource{name, version, Any}; the nonce is empty", async () => {
    const r = await poll(EDS, ["b"]);
    expect(r.typeUrl).toBe(EDS);
    expect(r.nonce).toBe("");
    expect(r.resources).toHaveLength(1);
    expect(r.resources[0]).toMatchObject({
      name: "b",
      version: "7",
      resource: { typeUrl: EDS, value: new TextEncoder().encode("b@7") },
    });
  });

  it("system_version_info is the set version of what the client then holds, SotW's version_info for it", async () => {
    const fresh = await poll(CDS, []);
    const current = await poll(CDS, [], { a: "1", b: "1", c: "1" });
    const partly = await poll(CDS, [], { a: "1", b: "0" });
    const want = await setVersion(["a", "b", "c"].map((name) => ({ name, version: "1" })));
    for (const r of [fresh, current, partly]) expect(r.systemVersionInfo).toBe(want);
    const sotw = await fetchDiscovery(store(), TypeUrl.cluster, create(DiscoveryRequestSchema, {}));
    expect(sotw.kind === "ok" && sotw.response.versionInfo).toBe(want);
    // Holding less in reach is a different set: a different version.
    expect((await poll(EDS, ["a"])).systemVersionInfo).not.toBe(
      (await poll(EDS, ["a", "b"])).systemVersionInfo,
    );
  });
});

describe("readPollRequest refuses what a poll cannot mean, naming the field", () => {
  const cases: { name: string; input: Parameters<typeof readPollRequest>[0]; want: RegExp }[] = [
    { name: "no request", input: {}, want: /^request is required/ },
    {
      name: "no type_url",
      input: pollRequest(""),
      want: /^request\.type_url is required: one of type\.googleapis/,
    },
    {
      name: "an unknown type_url",
      input: pollRequest("type.googleapis.com/x.Y"),
      want: /x\.Y is not served/,
    },
    {
      name: "a nonce",
      input: pollRequest(EDS, { responseNonce: "n1" }),
      want: /response_nonce must be empty/,
    },
    {
      name: "unsubscribe",
      input: pollRequest(EDS, { resourceNamesUnsubscribe: ["a"] }),
      want: /resource_names_unsubscribe must be empty: a poll carries its whole subscription/,
    },
    {
      name: "a NACK with code 0 (OK is no NACK)",
      input: pollRequest(EDS, { errorDetail: create(StatusSchema, { message: "bad" }) }),
      want: /^request\.error_detail\.code must be non-zero/,
    },
    {
      name: "a NACK message over 4096 characters",
      input: pollRequest(EDS, { errorDetail: create(StatusSchema, { code: 13, message: "x".repeat(4097) }) }),
      want: /^request\.error_detail\.message has 4097 characters; at most 4096/,
    },
    {
      name: "a NACK from a node id no status record can hold",
      input: pollRequest(EDS, {
        node: { id: "n\nforged" },
        errorDetail: create(StatusSchema, { code: 13, message: "bad" }),
      }),
      want: /^request\.node\.id has a control character .* at index 1/,
    },
    {
      name: "resource locators",
      input: pollRequest(EDS, { resourceLocatorsSubscribe: [{ name: "a" }] }),
      want: /resource_locators_subscribe\/unsubscribe are not supported/,
    },
    {
      name: "more names than the limit",
      input: pollRequest(EDS, { resourceNamesSubscribe: ["a", "b", "c", "d"] }),
      want: /resource_names_subscribe has 4 names; at most 3 per request \(EDGEPILOT_MAX_NAMES_PER_REQUEST\)/,
    },
    {
      name: "more held versions than the limit",
      input: pollRequest(EDS, { initialResourceVersions: { a: "1", b: "1", c: "1", d: "1" } }),
      want: /initial_resource_versions has 4 entries; at most 3/,
    },
    {
      name: '"*" on EDS',
      input: pollRequest(EDS, { resourceNamesSubscribe: ["*"] }),
      want: /"\*" \(wildcard\) exists only for listeners and clusters/,
    },
    {
      name: "an empty name",
      input: pollRequest(EDS, { resourceNamesSubscribe: ["a", ""] }),
      want: /resource_names_subscribe\[1\] is empty/,
    },
    {
      name: "a negative wait",
      input: { ...pollRequest(EDS), wait: { seconds: -1n, nanos: 0 } },
      want: /negative/,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const r = readPollRequest(c.input, 3);
      expect(r.ok).toBe(false);
      expect(r.ok ? "" : r.message).toMatch(c.want);
    });
  }

  it("pollDelta answers invalid with the same message, and reads nothing", async () => {
    const m = mutableSource();
    const r = await pollDelta(m.source, pollRequest(EDS, { responseNonce: "x" }));
    expect(r).toEqual({ kind: "invalid", message: expect.stringMatching(/response_nonce/) });
    expect(m.counts).toEqual({ get: 0, list: 0 });
  });

  it("takes a NACK (error_detail): code and message as sent, details ignored, the query otherwise the same", () => {
    const plain = pollRequest(EDS, { resourceNamesSubscribe: ["a"], initialResourceVersions: { a: "1" } });
    const errorDetail = create(StatusSchema, {
      code: 13,
      message: "y".repeat(4096),
      details: [{ typeUrl: "type.googleapis.com/x", value: new Uint8Array([1]) }],
    });
    const nacked = pollRequest(EDS, {
      resourceNamesSubscribe: ["a"],
      initialResourceVersions: { a: "1" },
      node: { id: "sidecar~10.0.0.1~a.default~default.svc.cluster.local" },
      errorDetail,
    });
    const a = readPollRequest(plain, 10);
    const b = readPollRequest(nacked, 10);
    if (!a.ok || !b.ok) throw new Error("refused");
    expect(a.query.nack).toBeUndefined();
    expect(b.query.nack).toEqual({ code: 13, message: "y".repeat(4096) });
    const { nack: _, ...rest } = b.query;
    expect(rest).toEqual(a.query);
  });

  it("reads wait in ms, capped at 60s", () => {
    const wait = (seconds: bigint, nanos = 0) => {
      const r = readPollRequest({ ...pollRequest(EDS), wait: { seconds, nanos } }, 10);
      return r.ok ? r.query.waitMs : r.message;
    };
    expect(wait(0n)).toBe(0);
    expect(wait(1n, 500_000_000)).toBe(1500);
    expect(wait(0n, 1)).toBe(1);
    expect(wait(59n, 999_000_000)).toBe(59_999);
    expect(wait(61n)).toBe(maxPollWaitMs);
    expect(wait(1n << 40n)).toBe(maxPollWaitMs);
    expect(readPollRequest(pollRequest(EDS), 10)).toMatchObject({ ok: true, query: { waitMs: 0 } });
  });
});
