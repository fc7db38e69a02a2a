/** SDS for proxyless gRPC: secrets are per workload, so a service view yields none. */
import type { Generator } from "../types.ts";
import { TypeUrl } from "../xds-types.ts";

/**
 * No Secret from a service view: a workload's certificate (`default`), its roots (`ROOTCA`) and a
 * gateway's credentials (`kubernetes://<name>`) belong to one workload, never to a service.
 */
export const secretGenerator: Generator = {
  typeUrl: TypeUrl.secret,
  generate() {
    return [];
  },
};
