/** The limits of the xDS read paths, as a host configures them (EDGEPILOT_MAX_*, lib/config.ts). */
import { defaultMaxResponseBytes } from "./budget.ts";
import { defaultAdsLimits } from "./delta-limits.ts";

/** Per-request and per-instance limits; each refusal names its variable. */
export interface Limits {
  /** EDGEPILOT_MAX_NAMES_PER_REQUEST: resource names, and held versions, in one request. */
  maxNamesPerRequest: number;
  /** EDGEPILOT_MAX_REQUEST_BYTES: the largest xDS request body (Connect message or REST JSON). */
  maxRequestBytes: number;
  /**
   * EDGEPILOT_MAX_RESPONSE_BYTES: the largest encoded xDS response (gRPC clients refuse messages
   * over 4 MiB by default). Delta answers and SotW EDS/RDS are cut into several responses under it;
   * a SotW CDS/LDS answer over it is refused (lib/xds/budget.ts).
   */
  maxResponseBytes: number;
  /** EDGEPILOT_MAX_STREAMS: open streams and waiting long polls per instance (per kind of stream). */
  maxStreams: number;
  /**
   * EDGEPILOT_MAX_STREAMS_PER_CONNECTION: concurrent HTTP/2 streams one XDS_PORT connection may
   * open (SETTINGS_MAX_CONCURRENT_STREAMS). A proxy needs one ADS stream, an agent a few.
   */
  maxStreamsPerConnection: number;
  /**
   * PILOT_MAX_REQUESTS_PER_SECOND (Istio's name): new ADS streams and unary/poll calls admitted
   * per second on XDS_PORT, burst 1; a call waits at most 1s for its turn, else ResourceExhausted.
   */
  maxRequestsPerSecond: number;
}

/** Limits when the environment sets none: generous for a real mesh, finite for a bad client. */
export const defaultLimits: Limits = {
  maxNamesPerRequest: defaultAdsLimits.maxNamesPerRequest,
  maxRequestBytes: 4 * 1024 * 1024,
  maxResponseBytes: defaultMaxResponseBytes,
  maxStreams: defaultAdsLimits.maxStreams,
  // RFC 9113 §6.5.2 advises no less than 100, so that a client is not needlessly serialized.
  maxStreamsPerConnection: 100,
  // istiod's default on a 2-core machine (min(15+5*cores, 100)), and its default before 1.21.
  maxRequestsPerSecond: 25,
};
