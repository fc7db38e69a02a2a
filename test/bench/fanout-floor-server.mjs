/**
 * The transport floor of the fan-out bench: a bare node:http2 server with no control-plane logic,
 * started with npm start's node flags and environment (fanout-floor.ts) and the same probe
 * (fanout-probe.mjs), and driven by the same client program (fanout-clients.ts). It serves
 * DeltaAggregatedResources as gRPC: on a stream's first request message it writes the current
 * response, and every further message (an ACK) is only split out of the byte stream (gRPC's 5-byte
 * prefix) and counted, never parsed. `POST /v1/events` on the HTTP port is answered at once, then
 * the current response is written to every open stream, in slices as the control plane tells its
 * streams (lib/push/signal.ts). The response bytes come from the bench
 * over IPC (`{ kind: "bytes", bytes: base64 }`, answered `{ kind: "bytes" }`): one gRPC-framed
 * DeltaDiscoveryResponse, encoded by the project as its server would for one change, written as
 * the same buffer to every stream. What this process spends per stream per push is what
 * node:http2 itself costs on this machine: the floor under the control plane's figure.
 * Plain JavaScript, so no TypeScript loader runs in it.
 */
import { createServer as createHttpServer } from "node:http";
import { createServer } from "node:http2";

const path = "/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources";
/** The framed response every stream gets now. */
let response = Buffer.alloc(5);
/** Open streams, each with whether it had its first answer. */
const open = new Set();
let acks = 0;

process.on("message", (m) => {
  if (m?.kind === "bytes") {
    response = Buffer.from(m.bytes, "base64");
    process.send({ kind: "bytes", acks });
  }
});

/** Counts the gRPC messages in a stream's DATA, across chunks; calls `onMessage` for each. */
function splitter(onMessage) {
  let want = -1;
  let held = 0;
  let prefix = Buffer.alloc(0);
  return (chunk) => {
    let at = 0;
    while (at < chunk.length) {
      if (want < 0) {
        const take = Math.min(5 - prefix.length, chunk.length - at);
        prefix = Buffer.concat([prefix, chunk.subarray(at, at + take)]);
        at += take;
        if (prefix.length < 5) return;
        want = prefix.readUInt32BE(1);
        prefix = Buffer.alloc(0);
        held = 0;
      }
      const take = Math.min(want - held, chunk.length - at);
      held += take;
      at += take;
      if (held === want) {
        want = -1;
        onMessage();
      }
    }
  };
}

const xds = createServer({ settings: { maxConcurrentStreams: 1_000_000 } });
xds.on("stream", (stream, headers) => {
  if (headers[":path"] !== path) {
    stream.respond({ ":status": 404 });
    stream.end();
    return;
  }
  stream.respond({ ":status": 200, "content-type": "application/grpc+proto" }, { waitForTrailers: true });
  stream.on("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
  let first = true;
  stream.on(
    "data",
    splitter(() => {
      if (!first) {
        acks++;
        return;
      }
      first = false;
      open.add(stream);
      stream.write(response);
    }),
  );
  stream.on("error", () => {});
  stream.on("close", () => open.delete(stream));
  stream.on("end", () => stream.end());
});

const http = createHttpServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end("{}");
    // As the control plane does: the push follows the answer, never on the POST's path, and goes
    // out in slices as lib/push/signal.ts tells its streams (2 ms, at least 16 streams each, a
    // yield between), so node:http2 flushes the first streams while later ones are written.
    const streams = [...open];
    const slice = (from) => {
      const started = performance.now();
      let i = from;
      for (; i < streams.length; i++) {
        if (i - from >= 16 && performance.now() - started >= 2) break;
        if (!streams[i].destroyed) streams[i].write(response);
      }
      if (i < streams.length) setImmediate(() => slice(i));
    };
    setImmediate(() => slice(0));
  });
});

http.listen(0, "127.0.0.1", () => {
  xds.listen(0, "127.0.0.1", () => {
    // The line startServer's callers read the ports from (functions/node/main.ts prints the same shape).
    console.log(
      `floor: ingest on http://127.0.0.1:${http.address().port}, xDS (bare node:http2) on h2c 127.0.0.1:${xds.address().port}`,
    );
  });
});

process.on("SIGTERM", () => {
  for (const s of open) s.close();
  xds.close();
  http.close();
  process.exit(0);
});
