/**
 * The HTTP/2 bounds of XDS_PORT: what one connection may hold, so that one client cannot take
 * the memory or the event loop every other proxy needs (issue 7: 2,000 streams on one connection
 * raised a good proxy's push latency from 70 ms to 5 s).
 */
import type { ServerOptions } from "node:http2";
import type { Limits } from "../../lib/xds/limits.ts";

/** Request header lists larger than this are refused: generous for a JWT in `authorization`. */
export const maxHeaderListBytes = 64 * 1024;
/** Megabytes one HTTP/2 session may buffer (node's own default, stated): past it new streams are refused. */
export const maxSessionMemoryMb = 10;

/**
 * Options for node:http2 createServer: EDGEPILOT_MAX_STREAMS_PER_CONNECTION as
 * SETTINGS_MAX_CONCURRENT_STREAMS (a client opening more gets REFUSED_STREAM, and one that keeps
 * trying loses its connection after node's 100 rejected streams), header list and session memory caps.
 */
export function xdsServerOptions(limits: Pick<Limits, "maxStreamsPerConnection">): ServerOptions {
  return {
    maxSessionMemory: maxSessionMemoryMb,
    maxHeaderListPairs: 128,
    settings: {
      maxConcurrentStreams: limits.maxStreamsPerConnection,
      maxHeaderListSize: maxHeaderListBytes,
    },
  };
}
