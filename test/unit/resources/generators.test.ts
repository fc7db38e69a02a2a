import { create, toBinary } from "@bufbuild/protobuf";
import { anyPack, anyUnpack } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import {
  type Cluster,
  Cluster_DiscoveryType,
  Cluster_LbPolicy,
} from "../../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import { ApiVersion, type ConfigSource } from "../../../lib/gen/envoy/config/core/v3/config_source_pb.ts";
import type { Listener } from "../../../lib/gen/envoy/config/listener/v3/listener_pb.ts";
import type { RouteConfiguration } from "../../../lib/gen/envoy/config/route/v3/route_pb.ts";
import { RouterSchema } from "../../../lib/gen/envoy/extensions/filters/http/router/v3/router_pb.ts";
import {
  HttpConnectionManagerSchema,
  HttpFilterSchema,
} from "../../../lib/gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import { connectionManager } from "../../../lib/resources/generators/listener.ts";
import { pushOrder, TypeUrl } from "../../../lib/resources/xds-types.ts";
import { ctx, HOST, port, service, view } from "../xds/builders.ts";
import {
  clusterGenerator,
  endpointGenerator,
  generateAll,
  generatorFor,
  generators,
  listenerGenerator,
  routeGenerator,
  virtualHostDomains,
} from "../xds/checked-generators.ts";

const names = (g: { name: string }[]) => g.map((r) => r.name);

function expectAds(source: ConfigSource | undefined) {
  expect(source?.configSourceSpecifier.case).toBe("ads");
  expect(source?.resourceApiVersion).toBe(ApiVersion.V3);
}

describe("registry", () => {
  it("has one generator per type URL, in push order", () => {
    expect(generators.map((g) => g.typeUrl)).toEqual(pushOrder);
    for (const t of Object.values(TypeUrl)) expect(generatorFor(t)?.typeUrl).toBe(t);
    expect(generatorFor("type.googleapis.com/envoy.service.runtime.v3.Runtime")).toBeUndefined();
    expect(generatorFor("toString")).toBeUndefined();
  });

  it("generates nothing for any type when the service has no records", () => {
    const out = generateAll(view({ services: [] }), ctx);
    expect(out.map((o) => o.typeUrl)).toEqual(pushOrder);
    for (const o of out) expect(o.resources).toEqual([]);
  });
});

describe("names follow Istio's proxyless gRPC generator", () => {
  const multi = view({ services: [service({ ports: [port({ name: "http", port: 8080 }), port()] })] });
  const cases = [
    { gen: listenerGenerator, want: [`${HOST}:8080`, `${HOST}:9080`] },
    { gen: routeGenerator, want: [`${HOST}:8080`, `${HOST}:9080`] },
    { gen: clusterGenerator, want: [`outbound|8080||${HOST}`, `outbound|9080||${HOST}`] },
    { gen: endpointGenerator, want: [`outbound|8080||${HOST}`, `outbound|9080||${HOST}`] },
  ];
  for (const { gen, want } of cases) {
    it(`${gen.typeUrl.split(".").at(-1)}: one per port, ascending`, () => {
      expect(names(gen.generate(multi, ctx))).toEqual(want);
    });
  }
});

describe("listener", () => {
  it("is an API listener whose HCM takes RDS over ADS and ends with the router", () => {
    const [g] = listenerGenerator.generate(view(), ctx);
    const l = g?.message as Listener;
    expect(l.name).toBe(`${HOST}:9080`);
    expect(l.address?.address.case).toBe("socketAddress");
    expect(l.address?.address.value).toMatchObject({ address: "10.96.0.10", portSpecifier: { value: 9080 } });
    expect(l.listenerFilters).toEqual([]);
    expect(l.filterChains).toEqual([]);
    const any = l.apiListener?.apiListener;
    expect(any?.typeUrl).toBe(
      "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
    );
    const hcm = any && anyUnpack(any, HttpConnectionManagerSchema);
    expect(hcm?.routeSpecifier.case).toBe("rds");
    const rds = hcm?.routeSpecifier.case === "rds" ? hcm.routeSpecifier.value : undefined;
    expect(rds?.routeConfigName).toBe(`${HOST}:9080`);
    expectAds(rds?.configSource);
    expect(hcm?.httpFilters.map((f) => f.name)).toEqual(["envoy.filters.http.router"]);
    const typed = hcm?.httpFilters[0]?.configType;
    expect(typed?.case).toBe("typedConfig");
    const router = typed?.case === "typedConfig" ? anyUnpack(typed.value, RouterSchema) : undefined;
    expect(router?.$typeName).toBe("envoy.extensions.filters.http.router.v3.Router");
  });

  it("composes the HCM's bytes exactly as toBinary encodes the whole manager", () => {
    const filter = (name: string) =>
      create(HttpFilterSchema, {
        name,
        configType: { case: "typedConfig", value: anyPack(RouterSchema, create(RouterSchema)) },
      });
    const lists = [
      [filter("envoy.filters.http.router")],
      [filter("a"), filter("envoy.filters.http.router")],
      [],
    ];
    // A name past 127 bytes takes a two-byte length; UTF-8 past ASCII counts bytes, not characters.
    const names = [`${HOST}:9080`, `${"x".repeat(200)}.svc.cluster.local:80`, "é.ns:1", ""];
    for (const filters of lists) {
      for (const name of names) {
        const any = connectionManager(name, filters);
        const whole = create(HttpConnectionManagerSchema, {
          statPrefix: name,
          routeSpecifier: {
            case: "rds",
            value: {
              configSource: {
                configSourceSpecifier: { case: "ads", value: {} },
                resourceApiVersion: ApiVersion.V3,
              },
              routeConfigName: name,
            },
          },
          httpFilters: filters,
        });
        expect(any.typeUrl).toBe(anyPack(HttpConnectionManagerSchema, whole).typeUrl);
        expect(any.value).toEqual(toBinary(HttpConnectionManagerSchema, whole));
      }
    }
  });

  it("uses 0.0.0.0 for a headless service", () => {
    const [g] = listenerGenerator.generate(view({ services: [service({ addresses: [] })] }), ctx);
    expect((g?.message as Listener).address?.address.value).toMatchObject({ address: "0.0.0.0" });
  });
});

describe("route", () => {
  it("has one virtual host with the authorities a client may dial, one prefix route to the cluster", () => {
    const [g] = routeGenerator.generate(view(), ctx);
    const rc = g?.message as RouteConfiguration;
    expect(rc.name).toBe(`${HOST}:9080`);
    expect(rc.virtualHosts).toHaveLength(1);
    const vh = rc.virtualHosts[0];
    expect(vh?.domains).toEqual([
      HOST,
      `${HOST}:9080`,
      "reviews",
      "reviews:9080",
      "reviews.default.svc",
      "reviews.default.svc:9080",
      "reviews.default",
      "reviews.default:9080",
    ]);
    expect(vh?.routes).toHaveLength(1);
    const r = vh?.routes[0];
    expect(r?.match?.pathSpecifier).toEqual({ case: "prefix", value: "/" });
    expect(r?.action.case).toBe("route");
    const action = r?.action.case === "route" ? r.action.value : undefined;
    expect(action?.clusterSpecifier).toEqual({ case: "cluster", value: `outbound|9080||${HOST}` });
  });

  const domainCases = [
    {
      name: "non-Kubernetes host: only itself",
      host: "api.example.com",
      suffix: "cluster.local",
      want: ["api.example.com", "api.example.com:443"],
    },
    {
      name: "other domain suffix: no short forms",
      host: HOST,
      suffix: "corp.local",
      want: [HOST, `${HOST}:443`],
    },
    {
      name: "empty suffix: no short forms",
      host: "a.b.svc.",
      suffix: "",
      want: ["a.b.svc.", "a.b.svc.:443"],
    },
  ];
  for (const c of domainCases) {
    it(`domains: ${c.name}`, () => expect(virtualHostDomains(c.host, 443, c.suffix)).toEqual(c.want));
  }
});

describe("cluster", () => {
  it("is EDS over ADS under its own name, round robin", () => {
    const [g] = clusterGenerator.generate(view(), ctx);
    const c = g?.message as Cluster;
    expect(c.name).toBe(`outbound|9080||${HOST}`);
    expect(c.clusterDiscoveryType).toEqual({ case: "type", value: Cluster_DiscoveryType.EDS });
    expect(c.edsClusterConfig?.serviceName).toBe(c.name);
    expectAds(c.edsClusterConfig?.edsConfig);
    expect(c.lbPolicy).toBe(Cluster_LbPolicy.ROUND_ROBIN);
  });
});

describe("multi-cluster merge", () => {
  it("unions ports by number; the first cluster by clusterId wins a conflict", () => {
    const v = view({
      services: [
        service({
          clusterId: "west",
          addresses: ["10.96.0.20"],
          ports: [port({ name: "web", port: 80, protocol: "HTTP" }), port({ port: 9090 })],
        }),
        service({
          clusterId: "east",
          addresses: ["10.96.0.30", "10.96.0.10"],
          ports: [port({ name: "http", port: 80, protocol: "HTTP" }), port()],
        }),
      ],
    });
    expect(names(clusterGenerator.generate(v, ctx))).toEqual([
      `outbound|80||${HOST}`,
      `outbound|9080||${HOST}`,
      `outbound|9090||${HOST}`,
    ]);
    const [l80] = listenerGenerator.generate(v, ctx);
    // east < west, so east's lowest ClusterIP is the listener address.
    expect((l80?.message as Listener).address?.address.value).toMatchObject({
      address: "10.96.0.10",
      portSpecifier: { value: 80 },
    });
  });
});
