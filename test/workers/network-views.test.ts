/**
 * Split-horizon EDS through the Worker on workerd: a shared ClusterLoadAssignment whose endpoints
 * carry their network and a network table with B's gateway, in the MeshStore; Connect Fetch and
 * Poll with node metadata NETWORK answer each view its own assignment, at the version its content
 * hashes to (what lib/resources/network-assignment.ts derives on every host), and the shared one to
 * a view that sees nothing to replace.
 */
import { runInDurableObject } from "cloudflare:test";
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { DeltaPollService } from "../../lib/gen/edgepilot/xds/v1/poll_pb.ts";
import { AddressSchema, SocketAddressSchema } from "../../lib/gen/envoy/config/core/v3/address_pb.ts";
import { LocalitySchema, MetadataSchema } from "../../lib/gen/envoy/config/core/v3/base_pb.ts";
import {
  EndpointSchema,
  LbEndpointSchema,
  LocalityLbEndpointsSchema,
} from "../../lib/gen/envoy/config/endpoint/v3/endpoint_components_pb.ts";
import { ClusterLoadAssignmentSchema } from "../../lib/gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { indexGateways } from "../../lib/resources/gateway-index.ts";
import { viewResource } from "../../lib/resources/network-assignment.ts";
import type { NetworkTable } from "../../lib/resources/network-table.ts";
import { networkViewOf } from "../../lib/resources/network-view.ts";
import type { StoredResource } from "../../lib/resources/types.ts";
import { setVersion, toStored } from "../../lib/resources/version.ts";
import { keys } from "../../lib/store/keys.ts";
import { createSqlStore } from "../../lib/store/sql.ts";
import { workerTransport } from "./poll-support.ts";
import { connectJson, freezeClock, mesh, TypeUrl } from "./support.ts";

const NAME = "outbound|9080||reviews.default.svc.cluster.local";
const table: NetworkTable = {
  gateways: [
    { network: "B", cluster: "", address: "192.0.2.1", port: 15443, locality: "", source: "address" },
  ],
};
const IP = "10.244.9.9";

function ep(address: string, network: string) {
  const socket = create(SocketAddressSchema, { address, portSpecifier: { case: "portValue", value: 9080 } });
  return create(LbEndpointSchema, {
    hostIdentifier: {
      case: "endpoint",
      value: create(EndpointSchema, {
        address: create(AddressSchema, { address: { case: "socketAddress", value: socket } }),
      }),
    },
    loadBalancingWeight: 1,
    metadata: create(MetadataSchema, {
      filterMetadata: { "envoy.transport_socket_match": { tlsMode: "istio" }, istio: { network } },
    }),
  });
}

let shared: StoredResource;

const node = (network: string) => ({
  id: `sidecar~${IP}~app-1.default~default.svc.cluster.local`,
  metadata: { GENERATOR: "grpc", NETWORK: network },
});

/** FetchEndpoints over Connect JSON for `network`'s node: its version_info and the addresses served. */
async function fetchFor(network: string) {
  const json = (await connectJson("envoy.service.endpoint.v3.EndpointDiscoveryService/FetchEndpoints", {
    node: node(network),
    typeUrl: TypeUrl.endpoint,
    resourceNames: [NAME],
  })) as {
    versionInfo: string;
    resources: {
      endpoints: { lbEndpoints: { endpoint: { address: { socketAddress: { address: string } } } }[] }[];
    }[];
  };
  const addresses = json.resources.flatMap((r) =>
    r.endpoints.flatMap((l) => l.lbEndpoints.map((e) => e.endpoint.address.socketAddress.address)),
  );
  return { versionInfo: json.versionInfo, addresses };
}

beforeAll(async () => {
  freezeClock();
  const message = create(ClusterLoadAssignmentSchema, {
    clusterName: NAME,
    endpoints: [
      create(LocalityLbEndpointsSchema, {
        locality: create(LocalitySchema, {}),
        lbEndpoints: [ep("10.244.1.1", "A"), ep("10.244.2.1", "B"), ep("10.244.2.2", "B")],
        loadBalancingWeight: 3,
      }),
    ],
  });
  shared = await toStored({ name: NAME, schema: ClusterLoadAssignmentSchema, message }, "default/reviews");
  await runInDurableObject(mesh(), async (_object, state) => {
    const store = createSqlStore(state.storage.sql);
    await store.put(keys.resource(TypeUrl.endpoint, NAME), shared);
    await store.put(keys.networkTable(), table);
  });
});

describe("network views through the Worker on workerd", () => {
  it("Fetch: a node on A gets B's gateway for B's endpoints, at the version its view hashes to", async () => {
    const want = await viewResource(shared, networkViewOf(node("A").metadata, [IP]), indexGateways(table));
    const got = await fetchFor("A");
    expect(got.addresses).toEqual(["10.244.1.1", "192.0.2.1"]);
    expect(want.version).not.toBe(shared.version);
    expect(got.versionInfo).toBe(await setVersion([{ name: NAME, version: want.version }]));
  });

  it("Fetch: a node on B sees nothing to replace (A has no gateway): the shared assignment", async () => {
    const got = await fetchFor("B");
    expect(got.addresses).toEqual(["10.244.1.1", "10.244.2.1", "10.244.2.2"]);
    expect(got.versionInfo).toBe(await setVersion([{ name: NAME, version: shared.version }]));
  });

  it("Poll: the same view, the same resource version as Fetch", async () => {
    const want = await viewResource(shared, networkViewOf(node("A").metadata, [IP]), indexGateways(table));
    const client = createClient(DeltaPollService, workerTransport(true));
    const r = await client.poll({
      request: { typeUrl: TypeUrl.endpoint, resourceNamesSubscribe: [NAME], node: node("A") },
    });
    expect(r.resources.map((x) => `${x.name}@${x.version}`)).toEqual([`${NAME}@${want.version}`]);
  });
});
