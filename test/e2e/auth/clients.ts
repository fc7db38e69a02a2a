/** Real clients for the Node auth tests: raw h2c requests (Connect on XDS_PORT) and @grpc/grpc-js ADS streams with metadata. */
import { connect } from "node:http2";
import { Readable } from "node:stream";
import { create, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import {
  DeltaDiscoveryRequestSchema,
  DiscoveryRequestSchema,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { decodeChecked } from "../../support/xds-check.ts";

/** One POST over cleartext HTTP/2 (prior knowledge), answered as a fetch Response whose body streams. */
export function h2cPost(
  port: number,
  path: string,
  body: Uint8Array | string,
  headers: Record<string, string>,
) {
  return new Promise<Response>((resolve, reject) => {
    const session = connect(`http://127.0.0.1:${port}`);
    session.on("error", reject);
    const req = session.request({ ":method": "POST", ":path": path, ...headers });
    req.on("error", reject);
    req.on("close", () => session.close());
    req.on("response", (h) => {
      const status = Number(h[":status"]);
      resolve(new Response(Readable.toWeb(req) as unknown as ReadableStream<Uint8Array>, { status }));
    });
    req.end(typeof body === "string" ? Buffer.from(body) : Buffer.from(body));
  });
}

const ads = "/envoy.service.discovery.v3.AggregatedDiscoveryService/";

/** How an ADS stream's first exchange ended: a response of that type, or the gRPC status. */
export type AdsOutcome = { served: string } | { code: grpc.status; details: string };

/**
 * Opens a SotW (or Delta) ADS stream with @grpc/grpc-js, `authorization: Bearer <token>` in its
 * metadata when given, sends `first`, and answers the first response's type or the error.
 */
export function adsFirst(
  port: number,
  token: string | undefined,
  first: MessageInitShape<typeof DiscoveryRequestSchema>,
  delta = false,
  /** Sent once the first response arrived; the outcome is then how the stream answers it. */
  second?: MessageInitShape<typeof DiscoveryRequestSchema>,
): Promise<AdsOutcome> {
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const md = new grpc.Metadata();
  if (token !== undefined) md.set("authorization", `Bearer ${token}`);
  const call = delta
    ? client.makeBidiStreamRequest(
        `${ads}DeltaAggregatedResources`,
        (m: MessageInitShape<typeof DeltaDiscoveryRequestSchema>) =>
          Buffer.from(toBinary(DeltaDiscoveryRequestSchema, create(DeltaDiscoveryRequestSchema, m))),
        decodeChecked.delta,
        md,
      )
    : client.makeBidiStreamRequest(
        `${ads}StreamAggregatedResources`,
        (m: MessageInitShape<typeof DiscoveryRequestSchema>) =>
          Buffer.from(toBinary(DiscoveryRequestSchema, create(DiscoveryRequestSchema, m))),
        decodeChecked.sotw,
        md,
      );
  return new Promise<AdsOutcome>((resolve) => {
    const timer = setTimeout(
      () => resolve({ code: grpc.status.DEADLINE_EXCEEDED, details: "no answer in 5s" }),
      5000,
    );
    const done = (o: AdsOutcome) => {
      clearTimeout(timer);
      call.cancel();
      client.close();
      resolve(o);
    };
    let pending = second;
    call.on("data", (r: { typeUrl: string }) => {
      if (!pending) return done({ served: r.typeUrl });
      (call.write as (m: unknown) => boolean)(pending);
      pending = undefined;
    });
    // connect-node percent-encodes grpc-message with encodeURIComponent; grpc-js decodes it with
    // decodeURI, which leaves reserved characters (":", ",", "/") encoded: finish the job here.
    call.on("error", (e: grpc.ServiceError) => done({ code: e.code, details: safeDecode(e.details) }));
    (call.write as (m: unknown) => boolean)(first);
  });
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
