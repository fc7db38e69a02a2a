/**
 * Bytes on the wire for one change, to a proxy that watches every service of a mesh: SotW ADS
 * versus Delta ADS, through the real sessions and the real flush. Sizes are the serialized
 * DiscoveryResponse / DeltaDiscoveryResponse messages (gRPC framing adds 5 bytes a message).
 * The proxy subscribes like Envoy: CDS wildcard, EDS/LDS/RDS by name for every service.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import {
  DeltaDiscoveryRequestSchema,
  type DeltaDiscoveryResponse,
  DeltaDiscoveryResponseSchema,
  DiscoveryRequestSchema,
  type DiscoveryResponse,
  DiscoveryResponseSchema,
} from "../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { pushOrder, TypeUrl } from "../../lib/resources/xds-types.ts";
import { createDeltaSession } from "../../lib/xds/delta.ts";
import { sotwResponse } from "../../lib/xds/response.ts";
import { createSotwSession } from "../../lib/xds/sotw.ts";
import { createStoreSource } from "../../lib/xds/source.ts";
import { buildMesh, hostOf, serviceEvents, sliceEvent } from "./mesh.ts";

export interface Cost {
  bytes: number;
  responses: number;
}

export interface BytesResult {
  services: number;
  initial: { sotw: Cost; delta: Cost };
  endpointMoved: { sotw: Cost; sotwFullEds: Cost; delta: Cost };
  serviceAdded: { sotw: Cost; delta: Cost };
}

/** What the proxy subscribes to per type; undefined names = wildcard. */
function subscriptions(services: number): Record<string, string[] | undefined> {
  const hosts = Array.from({ length: services }, (_, n) => hostOf(n));
  return {
    [TypeUrl.cluster]: undefined,
    [TypeUrl.endpoint]: hosts.map((h) => `outbound|9080||${h}`),
    [TypeUrl.listener]: hosts.map((h) => `${h}:9080`),
    [TypeUrl.route]: hosts.map((h) => `${h}:9080`),
  };
}

const sotwCost = (rs: DiscoveryResponse[]): Cost => ({
  bytes: rs.reduce((n, r) => n + toBinary(DiscoveryResponseSchema, r).length, 0),
  responses: rs.length,
});
const deltaCost = (rs: DeltaDiscoveryResponse[]): Cost => ({
  bytes: rs.reduce((n, r) => n + toBinary(DeltaDiscoveryResponseSchema, r).length, 0),
  responses: rs.length,
});

/** Measures one mesh size. */
export async function measureBytes(services: number): Promise<BytesResult> {
  const mesh = await buildMesh(services);
  const source = createStoreSource(mesh.store);
  const subs = subscriptions(services);

  const sotw = createSotwSession({ source });
  const sotwFirst: DiscoveryResponse[] = [];
  for (const typeUrl of pushOrder) {
    const names = subs[typeUrl] ?? [];
    const [r] = await sotw.onRequest(create(DiscoveryRequestSchema, { typeUrl, resourceNames: names }));
    if (!r) throw new Error(`SotW gave no first answer for ${typeUrl}`);
    sotwFirst.push(r);
    await sotw.onRequest(
      create(DiscoveryRequestSchema, {
        typeUrl,
        resourceNames: names,
        versionInfo: r.versionInfo,
        responseNonce: r.nonce,
      }),
    );
  }

  const delta = createDeltaSession({ source });
  const deltaFirst: DeltaDiscoveryResponse[] = [];
  for (const typeUrl of pushOrder) {
    const names = subs[typeUrl] ?? ["*"];
    for (const r of await delta.onRequest(
      create(DeltaDiscoveryRequestSchema, { typeUrl, resourceNamesSubscribe: names }),
    )) {
      deltaFirst.push(r);
      await delta.onRequest(create(DeltaDiscoveryRequestSchema, { typeUrl, responseNonce: r.nonce }));
    }
  }
  const ackDelta = async (rs: DeltaDiscoveryResponse[]) => {
    for (const r of rs)
      await delta.onRequest(
        create(DeltaDiscoveryRequestSchema, { typeUrl: r.typeUrl, responseNonce: r.nonce }),
      );
  };
  const ackSotw = async (rs: DiscoveryResponse[]) => {
    for (const r of rs) {
      const names = subs[r.typeUrl] ?? [];
      await sotw.onRequest(
        create(DiscoveryRequestSchema, {
          typeUrl: r.typeUrl,
          resourceNames: names,
          versionInfo: r.versionInfo,
          responseNonce: r.nonce,
        }),
      );
    }
  };

  // One endpoint of one service moves.
  const target = Math.floor(services / 2);
  const ips = [0, 1].map((i) => `10.${Math.floor(target / 250)}.${target % 250}.${i + 1}`);
  const moved = await mesh.ingestAndPush([sliceEvent(target, ips, "MODIFIED")]);
  if (moved.flushes[0]?.changes.length !== 1) throw new Error("expected one push changing one resource");
  const sotwMoved = await sotw.onPush();
  const deltaMoved = await delta.onPush();
  const allEds = await source.get(TypeUrl.endpoint, subs[TypeUrl.endpoint] ?? []);
  const fullEds = await sotwResponse(TypeUrl.endpoint, allEds, "nonce");
  await ackSotw(sotwMoved);
  await ackDelta(deltaMoved);

  // One service is added: CDS is state-of-the-world, so SotW resends every cluster.
  await mesh.ingestAndPush(serviceEvents(services + 1));
  const sotwAdded = await sotw.onPush();
  const deltaAdded = await delta.onPush();

  return {
    services,
    initial: { sotw: sotwCost(sotwFirst), delta: deltaCost(deltaFirst) },
    endpointMoved: {
      sotw: sotwCost(sotwMoved),
      sotwFullEds: sotwCost([fullEds.response]),
      delta: deltaCost(deltaMoved),
    },
    serviceAdded: { sotw: sotwCost(sotwAdded), delta: deltaCost(deltaAdded) },
  };
}
