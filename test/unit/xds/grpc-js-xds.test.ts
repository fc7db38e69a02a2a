/**
 * Decodes generated resources with @grpc/grpc-js-xds's own resource types, so what it validates
 * (and would NACK) is checked here, before the e2e test runs a real client.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { register } from "@grpc/grpc-js-xds";
import { findVirtualHostForDomain } from "@grpc/grpc-js-xds/build/src/xds-dependency-manager.js";
import { ClusterResourceType } from "@grpc/grpc-js-xds/build/src/xds-resource-type/cluster-resource-type.js";
import { EndpointResourceType } from "@grpc/grpc-js-xds/build/src/xds-resource-type/endpoint-resource-type.js";
import { ListenerResourceType } from "@grpc/grpc-js-xds/build/src/xds-resource-type/listener-resource-type.js";
import { RouteConfigurationResourceType } from "@grpc/grpc-js-xds/build/src/xds-resource-type/route-config-resource-type.js";
import type {
  XdsDecodeContext,
  XdsResourceType,
} from "@grpc/grpc-js-xds/build/src/xds-resource-type/xds-resource-type.js";
import { beforeAll, describe, expect, it } from "vitest";
import { ClusterLoadAssignmentSchema } from "../../../lib/gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { ApiListenerSchema } from "../../../lib/gen/envoy/config/listener/v3/api_listener_pb.ts";
import { ListenerSchema } from "../../../lib/gen/envoy/config/listener/v3/listener_pb.ts";
import {
  HttpConnectionManagerSchema,
  HttpFilterSchema,
} from "../../../lib/gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import type { ServiceView, StoredResource } from "../../../lib/resources/types.ts";
import { toStored } from "../../../lib/resources/version.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { ctx, endpoint, HOST, port, service, shards, view } from "./builders.ts";
import { generatorFor } from "./checked-generators.ts";

const context = { server: {}, bootstrap: { certificateProviders: {} } } as unknown as XdsDecodeContext;

/** The types grpc-js-xds decodes: proxyless gRPC reads its certificates from files, not SDS. */
const decoders = {
  [TypeUrl.listener]: ListenerResourceType.get(),
  [TypeUrl.route]: RouteConfigurationResourceType.get(),
  [TypeUrl.cluster]: ClusterResourceType.get(),
  [TypeUrl.endpoint]: EndpointResourceType.get(),
} satisfies Partial<Record<TypeUrl, XdsResourceType>>;
type Decoded = keyof typeof decoders;

function decode(typeUrl: Decoded, body: Uint8Array) {
  return decoders[typeUrl].decode(context, { type_url: typeUrl, value: Buffer.from(body) });
}

async function stored(typeUrl: TypeUrl, v: ServiceView): Promise<StoredResource[]> {
  const gen = generatorFor(typeUrl);
  if (!gen) throw new Error(`no generator for ${typeUrl}`);
  return Promise.all(gen.generate(v, ctx).map((g) => toStored(g, "default/reviews")));
}

const rich = view({
  services: [service({ ports: [port(), port({ name: "", port: 7070 })] }), service({ clusterId: "west" })],
  shards: shards({
    "Kubernetes/Kubernetes": [
      endpoint({ address: "10.0.0.1" }),
      endpoint({
        address: "10.0.0.2",
        health: "UNHEALTHY",
        locality: { region: "r1", zone: "z2", subzone: "" },
      }),
      endpoint({ address: "fd00::1", locality: { region: "", zone: "", subzone: "" } }),
    ],
    "Kubernetes/west": [
      endpoint({ address: "10.0.0.1" }),
      endpoint({ address: "10.0.9.9", health: "DRAINING" }),
    ],
  }),
});

describe("generated resources pass grpc-js-xds validation", () => {
  beforeAll(() => register());

  for (const typeUrl of Object.keys(decoders) as Decoded[]) {
    it(typeUrl.split(".").at(-1) ?? typeUrl, async () => {
      const resources = await stored(typeUrl, rich);
      expect(resources.length).toBe(2);
      for (const r of resources) {
        const result = decode(typeUrl, r.body);
        expect(result.error).toBeUndefined();
        expect(result.name).toBe(r.name);
      }
    });
  }

  it("the route's virtual host matches the authorities a client dials", async () => {
    const [r] = await stored(TypeUrl.route, rich);
    const decoded = decode(TypeUrl.route, r?.body ?? new Uint8Array()).value as {
      virtual_hosts: { domains: string[] }[];
    };
    for (const authority of [
      `${HOST}:7070`,
      "reviews:7070",
      "reviews.default:7070",
      "reviews.default.svc:7070",
    ]) {
      expect(findVirtualHostForDomain(decoded.virtual_hosts, authority), authority).not.toBeNull();
    }
    expect(findVirtualHostForDomain(decoded.virtual_hosts, "ratings:7070")).toBeNull();
  });

  it("the assignment keeps every locality weighted and each address once", async () => {
    const cla = (await stored(TypeUrl.endpoint, rich)).find((r) => r.name === `outbound|9080||${HOST}`);
    const decoded = decode(TypeUrl.endpoint, cla?.body ?? new Uint8Array()).value as {
      endpoints: { load_balancing_weight: { value: number } | null; lb_endpoints: unknown[] }[];
    };
    expect(decoded.endpoints.map((l) => [l.load_balancing_weight?.value, l.lb_endpoints.length])).toEqual([
      [1, 1], // "//": fd00::1
      [2, 2], // r1/z1/: 10.0.0.1 (once), 10.0.9.9
      [1, 1], // r1/z2/: 10.0.0.2
    ]);
  });
});

describe("the validator is live (these must be rejected)", () => {
  beforeAll(() => register());

  it("a listener whose last HTTP filter is not the router", () => {
    const hcm = create(HttpConnectionManagerSchema, {
      httpFilters: [
        create(HttpFilterSchema, {
          name: "x",
          configType: { case: "typedConfig", value: anyPack(ListenerSchema, create(ListenerSchema)) },
        }),
      ],
    });
    const l = create(ListenerSchema, {
      name: "l",
      apiListener: create(ApiListenerSchema, { apiListener: anyPack(HttpConnectionManagerSchema, hcm) }),
    });
    expect(decode(TypeUrl.listener, toBinary(ListenerSchema, l)).error).toMatch(/final filter is/);
  });

  it("an assignment whose locality is unset", () => {
    const cla = create(ClusterLoadAssignmentSchema, { clusterName: "c", endpoints: [{ lbEndpoints: [{}] }] });
    expect(decode(TypeUrl.endpoint, toBinary(ClusterLoadAssignmentSchema, cla)).error).toMatch(
      /locality unset/,
    );
  });
});
