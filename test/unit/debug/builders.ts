/** Builders for the debug readers' tests: records, services, shards, configs, push log entries. */
import type { Endpoint } from "../../../lib/model/endpoint.ts";
import type { Service } from "../../../lib/model/service.ts";
import type { PushLogEntry } from "../../../lib/push/flush.ts";
import type { IstioConfig } from "../../../lib/registry/istio/common.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import type { EndpointShardsRecord } from "../../../lib/shards/shards-record.ts";
import { type ProxyRecord, type ProxyRecordType, proxyRecord } from "../../../lib/xds/proxy-record.ts";

export const NODE = "sidecar~10.1.0.9~client-7d9f.default~default.svc.cluster.local";
export const NOW = Date.UTC(2026, 10, 23, 12, 0, 0);

export const recordType = (o: Partial<ProxyRecordType> = {}): ProxyRecordType => ({
  typeUrl: TypeUrl.cluster,
  wildcard: true,
  subscribed: [],
  subscribedCount: 0,
  sentCount: 0,
  ...o,
});

export const record = (
  o: Partial<ProxyRecord> = {},
  types: ProxyRecordType[] = [recordType()],
): ProxyRecord => ({
  ...proxyRecord(
    { nodeId: NODE, generator: "", types },
    { streamId: "s", now: NOW, connectedAt: NOW - 60_000 },
  ),
  ...o,
});

export const service = (o: Partial<Service> = {}): Service => ({
  hostname: "reviews.default.svc.cluster.local",
  name: "reviews",
  namespace: "default",
  clusterId: "Kubernetes",
  resolution: "ClientSideLB",
  addresses: ["10.96.0.9"],
  ports: [{ name: "grpc", port: 9080, protocol: "GRPC" }],
  labels: {},
  ...o,
});

export const endpoint = (o: Partial<Endpoint> = {}): Endpoint => ({
  address: "10.1.0.1",
  port: 9080,
  servicePortName: "grpc",
  labels: {},
  locality: { region: "", zone: "", subzone: "" },
  serviceAccount: "",
  health: "HEALTHY",
  ...o,
});

export const shards = (o: Partial<EndpointShardsRecord> = {}): EndpointShardsRecord => ({
  hostname: "reviews.default.svc.cluster.local",
  namespace: "default",
  shards: { "Kubernetes/Kubernetes": [endpoint()] },
  serviceAccounts: [],
  ...o,
});

export const config = (o: Partial<IstioConfig> = {}): IstioConfig => ({
  kind: "DestinationRule",
  name: "reviews",
  namespace: "default",
  clusterId: "Kubernetes",
  resourceVersion: "7",
  labels: {},
  spec: { host: "reviews" },
  ...o,
});

export const logEntry = (seq: number, o: Partial<PushLogEntry> = {}): PushLogEntry => ({
  seq,
  at: NOW + seq * 1000,
  request: {
    full: false,
    configsUpdated: ["Service/default/reviews"],
    reasons: { endpoint: 2 },
    start: NOW + seq * 1000 - 150,
  },
  changes: [
    { typeUrl: TypeUrl.endpoint, name: "outbound|9080||reviews.default.svc.cluster.local", version: "abc" },
  ],
  changeCount: 1,
  ...o,
});
