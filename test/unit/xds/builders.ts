/** Builders for xDS unit tests: model objects and service views with overrides. */
import type { Endpoint, Service, ServicePort } from "../../../lib/model/index.ts";
import type { GenerateContext, ServiceView } from "../../../lib/resources/types.ts";
import type { EndpointShardsRecord } from "../../../lib/shards/shards-record.ts";

export const HOST = "reviews.default.svc.cluster.local";
export const ctx: GenerateContext = { domainSuffix: "cluster.local" };

export const port = (o: Partial<ServicePort> = {}): ServicePort => ({
  name: "grpc",
  port: 9080,
  protocol: "GRPC",
  ...o,
});

export const service = (o: Partial<Service> = {}): Service => ({
  hostname: HOST,
  name: "reviews",
  namespace: "default",
  clusterId: "Kubernetes",
  resolution: "ClientSideLB",
  addresses: ["10.96.0.10"],
  ports: [port()],
  labels: {},
  ...o,
});

export const endpoint = (o: Partial<Endpoint> = {}): Endpoint => ({
  address: "10.0.0.1",
  port: 9080,
  servicePortName: "grpc",
  labels: {},
  locality: { region: "r1", zone: "z1", subzone: "" },
  serviceAccount: "",
  health: "HEALTHY",
  ...o,
});

/** A shards record from shard key ─▶ endpoints. */
export const shards = (by: Record<string, Endpoint[]>): EndpointShardsRecord => ({
  hostname: HOST,
  namespace: "default",
  shards: by,
  serviceAccounts: [],
});

export const view = (o: Partial<ServiceView> = {}): ServiceView => ({
  hostname: HOST,
  namespace: "default",
  services: [service()],
  shards: shards({ "Kubernetes/Kubernetes": [endpoint()] }),
  ...o,
});
