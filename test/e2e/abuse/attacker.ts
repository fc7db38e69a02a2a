/**
 * Runs the attacks of attacks.ts in their own process, as an attacker on another machine would, so
 * the suite's well-behaved proxy does not share an event loop with them. Reads one command per
 * line on stdin, `<attack> <hold ms>`, one at a time; prints "under way" once the attack's load is
 * in place and then its result as one line of JSON.
 * Usage: node --import tsx test/e2e/abuse/attacker.ts <xds port>
 */

import { createInterface } from "node:readline";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { ClusterDiscoveryService } from "../../../lib/gen/envoy/service/cluster/v3/cds_pb.ts";
import { CDS } from "../delta/mesh.ts";
import {
  DELTA_PATH,
  manyStreamsOneChannel,
  nonReadingSender,
  oversizedMessage,
  shortStreams,
} from "./attacks.ts";
import { floodStreams } from "./raw-h2.ts";

const MB = 1024 * 1024;

const port = Number(process.argv[2]);
let holdMs = 2000;
const hold = () => new Promise((r) => setTimeout(r, holdMs));
/** Tells the suite the load is in place: it measures its good proxy from here on. */
const underWay = () => process.stdout.write("under way\n");

/** Rounds of short streams until at least `total` were opened and `holdMs` passed. */
async function rounds(total: number, parallel: number, req: Parameters<typeof shortStreams>[3]) {
  const until = Date.now() + holdMs;
  const outcomes: Record<string, number> = {};
  const messages: Record<string, string> = {};
  let opened = 0;
  underWay();
  while (opened < total || Date.now() < until) {
    const r = await shortStreams(port, parallel, parallel, (i) => req(opened + i));
    opened += parallel;
    for (const [k, n] of Object.entries(r.outcomes)) outcomes[k] = (outcomes[k] ?? 0) + n;
    Object.assign(messages, r.messages);
  }
  return { opened, outcomes, messages, elapsedMs: Date.now() - (until - holdMs) };
}

const attacks: Record<string, () => Promise<unknown>> = {
  /** 200 short streams, 20 at a time, each with a 1 MB node id. */
  "huge-node-ids": () => rounds(200, 20, (i) => ({ node: { id: `${i}`.padEnd(MB, "x") }, typeUrl: CDS })),
  /** 2,000 streams on one @grpc/grpc-js channel, held open. */
  "many-streams": async () => {
    const a = await manyStreamsOneChannel(port, 2000, 300);
    underWay();
    await hold();
    const out = { answered: a.answered(), errors: a.errors };
    a.close();
    await new Promise((r) => setTimeout(r, 1000)); // grpc-js cancels 2,000 calls: let that pass here
    return out;
  },
  /** 1,000 streams at once on one raw connection that ignores SETTINGS_MAX_CONCURRENT_STREAMS. */
  "raw-flood": () => {
    setTimeout(underWay, 100);
    return floodStreams(port, DELTA_PATH, 1000, holdMs);
  },
  /** A DiscoveryRequest declaring 64 MB, body streamed as fast as the server takes it. */
  "64mb-message": async () => {
    // One refused message ends at once; keep sending them for the whole hold.
    const until = Date.now() + holdMs;
    const results = [];
    underWay();
    while (Date.now() < until) results.push(await oversizedMessage(port, 64 * MB, 64 * MB, holdMs));
    const first = results[0];
    return { ...first, attempts: results.length, maxSent: Math.max(...results.map((r) => r.sent)) };
  },
  /** Keeps sending answered requests, never reads; held while stuck. */
  "non-reading": async () => {
    const s = await nonReadingSender(port, 64 * MB, 500);
    underWay();
    await hold();
    s.close();
    return { sent: s.sent };
  },
  /** 300 new Delta streams, 60 at a time, each on its own connection. */
  /** 200 unary FetchClusters calls at once, then again for the whole hold. */
  "unary-flood": async () => {
    const fetch = createClient(
      ClusterDiscoveryService,
      createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` }),
    );
    const outcomes: Record<string, number> = {};
    const messages: Record<string, string> = {};
    const start = Date.now();
    underWay();
    while (Date.now() < start + holdMs) {
      await Promise.all(
        Array.from({ length: 200 }, () =>
          fetch.fetchClusters({}).then(
            () => {
              outcomes.answered = (outcomes.answered ?? 0) + 1;
            },
            (e) => {
              const c = Code[ConnectError.from(e).code];
              outcomes[c] = (outcomes[c] ?? 0) + 1;
              messages[c] ??= ConnectError.from(e).rawMessage;
            },
          ),
        ),
      );
    }
    return { outcomes, messages, elapsedMs: Date.now() - start };
  },
  "stream-flood": () => rounds(300, 60, (i) => ({ node: { id: `flood-${i}` }, typeUrl: CDS })),
};

if (!Number.isInteger(port)) {
  console.error("usage: attacker.ts <xds port>, then `<attack> <hold ms>` lines on stdin");
  process.exit(2);
}
for await (const line of createInterface({ input: process.stdin })) {
  const [attack = "", hold = "2000"] = line.trim().split(/\s+/);
  const run = attacks[attack];
  holdMs = Number(hold);
  const result = run
    ? await run()
    : { error: `unknown attack ${attack}: ${Object.keys(attacks).join(", ")}` };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
