import { describe, expect, it } from "vitest";
import type { ProxyStatus, ProxyTypeStatus } from "../../../lib/resources/types.ts";
import {
  isExpired,
  maxNodeIdLength,
  nodeIdProblem,
  proxyRecord,
  recordBounds,
} from "../../../lib/xds/proxy-record.ts";

const CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
const NODE = "sidecar~10.1.0.9~client-7d9f.default~default.svc.cluster.local";

const typeStatus = (o: Partial<ProxyTypeStatus> = {}): ProxyTypeStatus => ({
  typeUrl: CDS,
  wildcard: false,
  subscribed: [],
  ...o,
});
const status = (o: Partial<ProxyStatus> = {}): ProxyStatus => ({
  nodeId: NODE,
  generator: "grpc",
  types: [typeStatus()],
  ...o,
});
const names = (n: number, len = 10) => Array.from({ length: n }, (_, i) => `${i}`.padStart(len, "n"));

describe("nodeIdProblem", () => {
  it.each([
    { name: "an Istio sidecar id", id: NODE, want: undefined },
    { name: "empty (no node yet)", id: "", want: undefined },
    { name: "exactly the limit", id: "x".repeat(maxNodeIdLength), want: undefined },
    {
      name: "one over the limit",
      id: "x".repeat(maxNodeIdLength + 1),
      want: /1025 characters; at most 1024/,
    },
    { name: "1 MB", id: "x".repeat(1 << 20), want: /1048576 characters/ },
    { name: "a newline", id: "a\nb", want: /control character .*U\+000A.* at index 1/ },
    { name: "a lone surrogate", id: "a\ud800", want: /lone surrogate \(U\+D800\) at index 1/ },
    { name: "an emoji (a surrogate pair) is fine", id: "proxy-\u{1f600}", want: undefined },
  ])("$name", ({ id, want }) => {
    const got = nodeIdProblem(id);
    if (want === undefined) expect(got).toBeUndefined();
    else expect(got).toMatch(want);
  });
});

describe("proxyRecord: bounded whatever the proxy sends", () => {
  it("keeps a small status whole, stamped with its stream and expiry", () => {
    const s = status({
      types: [
        typeStatus({
          subscribed: ["a", "b"],
          sent: { versionInfo: "v1", nonce: "n1", versions: { a: "h1", b: "h2" } },
          ackedVersion: "v1",
        }),
      ],
    });
    expect(proxyRecord(s, { streamId: "s1", now: 1000, ttlMs: 60_000 })).toEqual({
      nodeId: NODE,
      generator: "grpc",
      streamId: "s1",
      updatedAt: 1000,
      expiresAt: 61_000,
      types: [
        {
          typeUrl: CDS,
          wildcard: false,
          subscribed: ["a", "b"],
          subscribedCount: 2,
          sent: { versionInfo: "v1", nonce: "n1", versions: { a: "h1", b: "h2" } },
          sentCount: 2,
          ackedVersion: "v1",
        },
      ],
      typesOmitted: 0,
    });
  });

  it("cuts lists, strings, NACK messages and type counts to recordBounds", () => {
    const many = names(10_000);
    const huge = "y".repeat(1 << 20);
    const s = status({
      generator: huge,
      types: Array.from({ length: 50 }, (_, i) =>
        typeStatus({
          typeUrl: `type.example/${i}-${huge}`,
          subscribed: [huge, ...many],
          sent: {
            versionInfo: huge,
            nonce: "n",
            versions: Object.fromEntries(many.map((n) => [n, huge])),
          },
          nack: { versionInfo: "v0", nonce: "n", message: `line one\nline two ${huge}` },
        }),
      ),
    });
    const r = proxyRecord(s, { streamId: "s", now: 0 });
    expect(r.types).toHaveLength(recordBounds.types);
    expect(r.typesOmitted).toBe(50 - recordBounds.types);
    const t = r.types[0]!;
    expect(t.subscribed).toHaveLength(recordBounds.names);
    expect(t.subscribedCount).toBe(10_001);
    expect(Object.keys(t.sent?.versions ?? {})).toHaveLength(recordBounds.names);
    expect(t.sentCount).toBe(10_000);
    expect(t.nack?.message.length).toBeLessThan(recordBounds.nackChars + 40);
    expect(t.nack?.message).toMatch(/^line one\nline two y+…\(\+\d+ chars\)$/);
    // The whole record stays small: the bound is what matters, not the exact figure.
    expect(JSON.stringify(r).length).toBeLessThan(100_000);
  });
});

describe("isExpired", () => {
  it.each([
    { record: { expiresAt: 100 }, now: 99, want: false },
    { record: { expiresAt: 100 }, now: 100, want: true },
    { record: { nodeId: "old record without expiry" }, now: 0, want: true },
    { record: undefined, now: 0, want: true },
  ])("$record at $now ▶ $want", ({ record, now, want }) => {
    expect(isExpired(record, now)).toBe(want);
  });
});
