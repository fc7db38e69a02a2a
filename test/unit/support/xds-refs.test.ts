/**
 * The cross-reference check (test/support/xds-refs.ts): a generated set with a VirtualService and a
 * DestinationRule is consistent; removing or renaming what one resource names is caught, for each
 * kind of reference (RDS name, route cluster, weighted cluster, mirror, tcp_proxy, EDS assignment).
 */
import { create, type DescMessage, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { ListenerSchema } from "../../../lib/gen/envoy/config/listener/v3/listener_pb.ts";
import { RouteConfigurationSchema } from "../../../lib/gen/envoy/config/route/v3/route_pb.ts";
import { TcpProxySchema } from "../../../lib/gen/envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy_pb.ts";
import { TypeUrl, xdsType } from "../../../lib/resources/xds-types.ts";
import { danglingReferences, type EncodedResource } from "../../support/xds-refs.ts";
import { ctx } from "../xds/builders.ts";
import { generateAll } from "../xds/checked-generators.ts";
import { drModel, httpRoute, istioView, vsModel } from "../xds/istio-views.ts";

type Named = EncodedResource & { name: string };

function generated(): Named[] {
  const vs = vsModel({
    http: [
      httpRoute({
        route: [
          { destination: { host: "reviews", subset: "v1" }, weight: 80 },
          { destination: { host: "reviews", subset: "v2" }, weight: 20 },
        ],
        mirror: { host: "reviews", subset: "v2" },
      }),
    ],
  });
  return generateAll(istioView({ virtualService: vs, destinationRule: drModel() }), ctx).flatMap(
    ({ typeUrl, resources }) =>
      resources.map((g) => ({ typeUrl, name: g.name, value: toBinary(g.schema as DescMessage, g.message) })),
  );
}

const encode = <D extends DescMessage>(typeUrl: string, schema: D, init: MessageInitShape<D>): Named => {
  const m = create(schema, init);
  return { typeUrl, name: (m as { name?: string }).name ?? "", value: toBinary(schema, m) };
};
const without = (set: Named[], typeUrl: string, name?: string) =>
  set.filter((r) => !(r.typeUrl === typeUrl && (name === undefined || r.name === name)));

describe("danglingReferences", () => {
  const set = generated();

  it("a generated set is consistent, and holds every kind of shared resource", () => {
    // Secrets are per proxy (SDS for gateways): a service view makes none.
    for (const t of Object.values(TypeUrl).filter((t) => !xdsType(t)?.perProxy))
      expect(
        set.some((r) => r.typeUrl === t),
        t,
      ).toBe(true);
    expect(danglingReferences(set)).toEqual([]);
  });

  it.each([
    [
      "an HCM's RDS name not served",
      () => without(set, TypeUrl.route),
      /Listener .*: RDS route_config_name "reviews.default.svc.cluster.local:9080" is not served/,
    ],
    [
      "a weighted cluster missing",
      () => without(set, TypeUrl.cluster, "outbound|9080|v1|reviews.default.svc.cluster.local"),
      /RouteConfiguration .*: cluster "outbound\|9080\|v1\|reviews/,
    ],
    [
      "an EDS cluster without its assignment",
      () => without(set, TypeUrl.endpoint, "outbound|9080|v2|reviews.default.svc.cluster.local"),
      /Cluster "outbound\|9080\|v2\|reviews.default.svc.cluster.local": EDS ClusterLoadAssignment .* is not served/,
    ],
    [
      "a route's cluster and a mirror missing",
      () => [
        ...set,
        encode(TypeUrl.route, RouteConfigurationSchema, {
          name: "r",
          virtualHosts: [
            {
              name: "v",
              domains: ["*"],
              routes: [
                {
                  match: { pathSpecifier: { case: "prefix", value: "/" } },
                  action: {
                    case: "route",
                    value: {
                      clusterSpecifier: { case: "cluster", value: "nowhere" },
                      requestMirrorPolicies: [{ cluster: "shadow" }],
                    },
                  },
                },
              ],
            },
          ],
        }),
      ],
      /RouteConfiguration "r": cluster "nowhere" does not exist\nRouteConfiguration "r": cluster "shadow" does not exist/,
    ],
    [
      "a tcp_proxy's cluster missing",
      () => [
        ...set,
        encode(TypeUrl.listener, ListenerSchema, {
          name: "10.0.0.9_3306",
          filterChains: [
            {
              filters: [
                {
                  name: "envoy.filters.network.tcp_proxy",
                  configType: {
                    case: "typedConfig",
                    value: anyPack(
                      TcpProxySchema,
                      create(TcpProxySchema, {
                        statPrefix: "s",
                        clusterSpecifier: { case: "cluster", value: "outbound|3306||db" },
                      }),
                    ),
                  },
                },
              ],
            },
          ],
        }),
      ],
      /Listener "10.0.0.9_3306" \(tcp_proxy\): cluster "outbound\|3306\|\|db" does not exist/,
    ],
  ])("%s is caught", (_, build, expected) => {
    expect(danglingReferences(build()).join("\n")).toMatch(expected);
  });

  it("a tcp_proxy naming an existing cluster passes", () => {
    const cluster = set.find((r) => r.typeUrl === TypeUrl.cluster) as Named;
    const l = encode(TypeUrl.listener, ListenerSchema, {
      name: "l",
      filterChains: [
        {
          filters: [
            {
              name: "tcp",
              configType: {
                case: "typedConfig",
                value: anyPack(
                  TcpProxySchema,
                  create(TcpProxySchema, {
                    statPrefix: "s",
                    clusterSpecifier: { case: "cluster", value: cluster.name },
                  }),
                ),
              },
            },
          ],
        },
      ],
    });
    expect(danglingReferences([...set, l])).toEqual([]);
  });
});
