/** SDS in the shared generation: none. A gateway's credentials are read per proxy (lib/xds/gateway-secrets.ts). */
import type { Generator } from "../types.ts";
import { TypeUrl } from "../xds-types.ts";

/**
 * No Secret from a service view: a workload's certificate (`default`), its roots (`ROOTCA`) and a
 * gateway's credentials (`kubernetes://<name>`) belong to one proxy, never to a service, so the
 * shared resources never hold one.
 */
export const secretGenerator: Generator = {
  typeUrl: TypeUrl.secret,
  generate() {
    return [];
  },
};
