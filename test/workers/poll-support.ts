/** Connect transports into the Worker on workerd (JSON and binary) for the poll suites. */
import { exports } from "cloudflare:workers";
import type { Transport } from "@connectrpc/connect";
import { createFetchClient } from "@connectrpc/connect/protocol";
import { createTransport } from "@connectrpc/connect/protocol-connect";
import { xdsRegistry } from "../../lib/xds/registry.ts";
import { origin, xdsAuth } from "./support.ts";

/** Connect over the Worker's fetch handler, as an outside client sends it. */
export function workerTransport(useBinaryFormat: boolean): Transport {
  return createTransport({
    httpClient: createFetchClient(((input, init) => exports.default.fetch(input, init)) as typeof fetch),
    baseUrl: origin,
    useBinaryFormat,
    jsonOptions: { registry: xdsRegistry },
    interceptors: [
      (next) => (req) => {
        req.header.set("authorization", xdsAuth.authorization);
        return next(req);
      },
    ],
    acceptCompression: [],
    sendCompression: null,
    compressMinBytes: 1024,
    readMaxBytes: 0xffffffff,
    writeMaxBytes: 0xffffffff,
  });
}

/** Both codecs. */
export const workerTransports = (): Record<string, Transport> => ({
  "Connect JSON": workerTransport(false),
  "Connect binary": workerTransport(true),
});
