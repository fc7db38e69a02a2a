/**
 * connect-node writes a gRPC status message with encodeURIComponent, and grpc-js decodes it with
 * decodeURI, which leaves ":", "/", ";" and "," encoded: a client would read
 * "request authenticate failure%3A ...". This wraps a listener so the responses of the given
 * services carry grpc-message as the gRPC HTTP/2 protocol writes it (ads-h2.ts grpcStatusMessage).
 */
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { grpcStatusMessage } from "./ads-h2.ts";

type Listener = (req: Http2ServerRequest, res: Http2ServerResponse) => void;

/** `listener`, with grpc-message re-encoded on the gRPC responses of paths under `prefixes` (`/<package>.<Service>/`). */
export function withGrpcMessageTrailer(listener: Listener, prefixes: readonly string[]): Listener {
  return (req, res) => {
    const type = req.headers["content-type"] ?? "";
    if (
      type.startsWith("application/grpc") &&
      !type.startsWith("application/grpc-web") &&
      prefixes.some((p) => req.url.startsWith(p))
    ) {
      const add = res.addTrailers.bind(res);
      res.addTrailers = (trailers) => {
        const message = trailers["grpc-message"];
        if (typeof message === "string") {
          let text = message;
          try {
            text = decodeURIComponent(message);
          } catch {
            // not percent-encoded by connect: sent as it is, re-encoded below
          }
          add({ ...trailers, "grpc-message": grpcStatusMessage(text) });
        } else add(trailers);
      };
    }
    listener(req, res);
  };
}
