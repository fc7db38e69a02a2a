/** Proxy status belongs to the mesh core (lib/core/proxy-status.ts); kept here for existing importers. */
export {
  createProxyStatusRecorder,
  type ProxyStatusOptions,
  type ProxyStatusRecorder,
  startProxyStatusSweep,
  sweepProxyStatus,
} from "../lib/core/proxy-status.ts";
