/**
 * A Poll or Watch carrying a NACK (request.error_detail): the same answer as without it, and the
 * NACK recorded in the node's proxy status (lib/core/poll-nack.ts) once, over the real memory store.
 */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { StatusSchema } from "../../../lib/gen/google/rpc/status_pb.ts";
import { keys, type Store } from "../../../lib/store/index.ts";
import { createPollHub } from "../../../lib/xds/poll-hub.ts";
import {
  createPollNackLogger,
  createPollNackRecorder,
  pollNackStreamId,
} from "../../../lib/xds/poll-nack.ts";
import type { PollNackReport } from "../../../lib/xds/poll-request.ts";
import { createPollServer } from "../../../lib/xds/poll-serve.ts";
import { type ProxyRecord, proxyRecord, recordBounds } from "../../../lib/xds/proxy-record.ts";
import { countingStore } from "./counting-store.ts";
import { CDS, EDS, mutableSource, pollRequest, res, summary } from "./poll-support.ts";

const NODE = "sidecar~10.1.0.9~client.default~default.svc.cluster.local";
const NOW = 1_700_000_000_000;

/** A Poll server whose NACKs go to a recorder over `store`; `settled` waits for the recorder's writes. */
function setup(store = countingStore()) {
  const m = mutableSource([res(EDS, "a", "1"), res(EDS, "b", "1"), res(CDS, "c1", "1")]);
  const lines: string[] = [];
  const recorder = createPollNackRecorder({ store, log: (l) => lines.push(l), now: () => NOW });
  const pending: Promise<void>[] = [];
  const server = createPollServer({
    source: m.source,
    hub: createPollHub(m.source),
    limits: { maxNamesPerRequest: 100, maxStreams: 10 },
    onNack: (n) => void pending.push(recorder(n)),
  });
  const call = { signal: new AbortController().signal };
  const settled = () => Promise.all(pending.splice(0));
  return { store, lines, server, call, settled };
}

const nacking = (message: string, o: { node?: string; code?: number } = {}) =>
  pollRequest(EDS, {
    node: { id: o.node ?? NODE, metadata: { GENERATOR: "grpc" } },
    resourceNamesSubscribe: ["a", "b"],
    initialResourceVersions: { a: "1", b: "0" },
    errorDetail: create(StatusSchema, { code: o.code ?? 13, message }),
  });

const stored = async (store: Store, node = NODE) => (await store.get<ProxyRecord>(keys.proxy(node)))?.value;

describe("a Poll/Watch NACK", () => {
  it("is answered as the same request without it, and recorded in the node's proxy status", async () => {
    const s = setup();
    const plain = await s.server.poll(
      pollRequest(EDS, { resourceNamesSubscribe: ["a", "b"], initialResourceVersions: { a: "1", b: "0" } }),
      s.call,
    );
    const nacked = await s.server.poll(nacking("n1: endpoint 10.0.0.1 rejected"), s.call);
    expect(summary(nacked)).toEqual(summary(plain));
    expect(summary(nacked)).toEqual({ resources: { b: "1" }, removed: [] });
    await s.settled();
    expect(await stored(s.store)).toEqual({
      nodeId: NODE,
      generator: "grpc",
      streamId: pollNackStreamId,
      updatedAt: NOW,
      expiresAt: expect.any(Number),
      typesOmitted: 0,
      types: [
        {
          typeUrl: EDS,
          wildcard: false,
          subscribed: ["a", "b"],
          subscribedCount: 2,
          sentCount: 0,
          nack: { versionInfo: "", nonce: "", message: "n1: endpoint 10.0.0.1 rejected" },
        },
      ],
    });
    expect(s.lines).toEqual([
      `xds: "${NODE}" NACKed "${EDS}" (kept 2 resource(s), over Poll/Watch): "n1: endpoint 10.0.0.1 rejected"`,
    ]);
  });

  it("a repeat (same node, type and message) writes and logs nothing; a new message does, once", async () => {
    const s = setup();
    await s.server.poll(nacking("bad"), s.call);
    await s.settled();
    expect(s.store.puts()).toBe(1);
    // Together (both in flight) and after: still one write.
    await Promise.all([s.server.poll(nacking("bad"), s.call), s.server.poll(nacking("bad"), s.call)]);
    const watch = s.server.watch(nacking("bad"), s.call);
    await watch.next();
    await watch.return(undefined);
    await s.settled();
    expect(s.store.puts()).toBe(1);
    expect(s.lines).toHaveLength(1);
    await s.server.poll(nacking("worse"), s.call);
    await s.settled();
    expect(s.store.puts()).toBe(2);
    expect((await stored(s.store))?.types[0]?.nack?.message).toBe("worse");
    expect(s.lines).toHaveLength(2);
  });

  it("joins a record an ADS stream owns (its owner and other types kept); bounded like it", async () => {
    const s = setup();
    const ads = proxyRecord(
      {
        nodeId: NODE,
        generator: "grpc",
        types: [
          { typeUrl: CDS, wildcard: true, subscribed: [], ackedVersion: "v1" },
          { typeUrl: EDS, wildcard: false, subscribed: ["a"], ackedVersion: "v2" },
        ],
      },
      { streamId: "ads-stream", now: NOW },
    );
    await s.store.put(keys.proxy(NODE), ads);
    await s.server.poll(nacking("x".repeat(4000)), s.call);
    await s.settled();
    const r = await stored(s.store);
    expect(r?.streamId).toBe("ads-stream");
    expect(r?.types.map((t) => [t.typeUrl, t.ackedVersion])).toEqual([
      [CDS, "v1"],
      [EDS, "v2"],
    ]);
    const message = r?.types[1]?.nack?.message ?? "";
    expect(message.startsWith("x".repeat(recordBounds.nackChars))).toBe(true);
    expect(message).toMatch(/…\(\+2976 chars\)$/);
  });

  it("a request without a node is logged, not recorded; a bad NACK is refused before anything", async () => {
    const s = setup();
    await s.server.poll(
      pollRequest(EDS, { resourceNamesSubscribe: ["a"], errorDetail: { code: 3, message: "no node" } }),
      s.call,
    );
    await s.settled();
    expect(s.store.puts()).toBe(0);
    expect(s.lines).toEqual([expect.stringMatching(/^xds: \(no node id\) NACKed .* "no node"$/)]);
    await expect(s.server.poll(nacking("x", { code: 0 }), s.call)).rejects.toThrow(/code must be non-zero/);
    await s.settled();
    expect(s.store.puts()).toBe(0);
  });
});

describe("the Worker's NACK logger (no proxy status there)", () => {
  it("logs each distinct NACK once, escaped, remembering a bounded number of (node, type)", async () => {
    const lines: string[] = [];
    const logNack = createPollNackLogger((l) => lines.push(l), 2);
    const report = (nodeId: string, message: string): PollNackReport => ({
      nodeId,
      generator: "",
      typeUrl: EDS,
      wildcard: false,
      subscribed: [],
      kept: 0,
      code: 13,
      message,
    });
    await logNack(report("n1", "bad\nxds: forged"));
    await logNack(report("n1", "bad\nxds: forged"));
    expect(lines).toEqual([`xds: "n1" NACKed "${EDS}" (kept nothing, over Poll/Watch): "bad\\nxds: forged"`]);
    await logNack(report("n2", "b"));
    await logNack(report("n3", "c"));
    // n1 was forgotten (at most 2 remembered): its NACK is said again.
    await logNack(report("n1", "bad\nxds: forged"));
    expect(lines).toHaveLength(4);
  });
});
