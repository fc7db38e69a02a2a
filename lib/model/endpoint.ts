/** Endpoint model: one address:port serving one named service port (Istio's IstioEndpoint). */

/** Health as Istio tracks it; only HEALTHY endpoints are served unless configured otherwise. */
export type HealthStatus = "HEALTHY" | "UNHEALTHY" | "DRAINING" | "TERMINATING";

/** Where an endpoint runs. Empty strings when unknown. */
export interface Locality {
  region: string;
  zone: string;
  subzone: string;
}

export interface Endpoint {
  address: string;
  port: number;
  /** The name of the service port this endpoint serves (EndpointSlice port name). */
  servicePortName: string;
  labels: Record<string, string>;
  locality: Locality;
  /** SPIFFE identity, or "" when unknown. */
  serviceAccount: string;
  health: HealthStatus;
  // Optional fields below are present only when set, always in this order.
  /** Load balancing weight (a WorkloadEntry's weight); absent = unset (the proxy's default, 1). */
  weight?: number;
  /** The network the endpoint lives in (a WorkloadEntry's network); absent = the default network. */
  network?: string;
}

/** The identity of an endpoint inside one shard: two endpoints with one key are the same endpoint. */
export function endpointKey(e: Pick<Endpoint, "address" | "port" | "servicePortName">): string {
  return `${e.address}|${e.port}|${e.servicePortName}`;
}

/** True when two endpoints carry the same information (Istio's IstioEndpoint.Equals). */
export function endpointEquals(a: Endpoint, b: Endpoint): boolean {
  return (
    a.address === b.address &&
    a.port === b.port &&
    a.servicePortName === b.servicePortName &&
    a.serviceAccount === b.serviceAccount &&
    a.health === b.health &&
    a.locality.region === b.locality.region &&
    a.locality.zone === b.locality.zone &&
    a.locality.subzone === b.locality.subzone &&
    a.weight === b.weight &&
    a.network === b.network &&
    recordEquals(a.labels, b.labels)
  );
}

function recordEquals(a: Record<string, string>, b: Record<string, string>): boolean {
  const ak = Object.keys(a);
  if (ak.length !== Object.keys(b).length) return false;
  return ak.every((k) => a[k] === b[k]);
}

/** The locality as Envoy and Istio write it: `region/zone/subzone`. */
export function localityLabel(l: Locality): string {
  return [l.region, l.zone, l.subzone].join("/");
}
