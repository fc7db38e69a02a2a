/** A raw Delta ADS client's holdings as an Envoy sidecar would apply them (e2e sidecar suites). */
import type { Cluster } from "../../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import type { Listener } from "../../../lib/gen/envoy/config/listener/v3/listener_pb.ts";
import type { RouteConfiguration } from "../../../lib/gen/envoy/config/route/v3/route_pb.ts";
import type { DeltaDiscoveryResponse } from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import type { DeltaStream } from "../delta/delta-client.ts";
import { decoded, edsNames, rdsNames } from "./bookinfo-mesh.ts";

const { cluster: CDS, endpoint: EDS, listener: LDS, route: RDS } = TypeUrl;

/** What a Delta client holds: bodies per type, applied response by response (each ACKed). */
export function holder(d: DeltaStream) {
  const bodies = new Map<string, Map<string, Uint8Array>>();
  const of = (t: string) => bodies.get(t) ?? (bodies.set(t, new Map()).get(t) as Map<string, Uint8Array>);
  return {
    async take(): Promise<DeltaDiscoveryResponse[]> {
      const rs = await d.drain();
      for (const r of rs) {
        for (const x of r.resources) if (x.resource) of(r.typeUrl).set(x.name, x.resource.value);
        for (const n of r.removedResources) of(r.typeUrl).delete(n);
        d.send({ typeUrl: r.typeUrl, responseNonce: r.nonce });
      }
      return rs;
    },
    clusters: () => decoded(CDS, of(CDS)) as Map<string, Cluster>,
    listeners: () => decoded(LDS, of(LDS)) as Map<string, Listener>,
    routes: () => decoded(RDS, of(RDS)) as Map<string, RouteConfiguration>,
    names: (t: string) => [...of(t).keys()].sort(),
  };
}

/** Subscribes a Delta sidecar to everything its clusters and listeners name, as Envoy does. */
export async function subscribeAll(d: DeltaStream, h: ReturnType<typeof holder>): Promise<void> {
  const eds = edsNames(h.clusters().values()).filter((n) => !h.names(EDS).includes(n));
  const rds = rdsNames(h.listeners().values()).filter((n) => !h.names(RDS).includes(n));
  if (eds.length > 0) d.send({ typeUrl: EDS, resourceNamesSubscribe: eds });
  if (rds.length > 0) d.send({ typeUrl: RDS, resourceNamesSubscribe: rds });
  await h.take();
}
