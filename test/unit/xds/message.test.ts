import { create, equals, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ClusterSchema } from "../../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import { SocketAddressSchema } from "../../../lib/gen/envoy/config/core/v3/address_pb.ts";
import { LbEndpointSchema } from "../../../lib/gen/envoy/config/endpoint/v3/endpoint_components_pb.ts";
import { HttpConnectionManagerSchema } from "../../../lib/gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import { adsConfigSource, blank, message } from "../../../lib/resources/generators/shared.ts";

describe("message(): create() for wide, hot messages", () => {
  const cases = [
    ["Cluster with a oneof and a sub-message", ClusterSchema, { name: "c", edsClusterConfig: undefined }],
    ["LbEndpoint with a wrapper field", LbEndpointSchema, { loadBalancingWeight: 3, healthStatus: 1 }],
    [
      "SocketAddress with a oneof",
      SocketAddressSchema,
      { address: "10.0.0.1", portSpecifier: { case: "portValue", value: 80 } },
    ],
    ["an empty HttpConnectionManager", HttpConnectionManagerSchema, {}],
  ] as const;

  it.each(cases)("%s equals create() and encodes to the same bytes", (_, schema, fields) => {
    const made = message(schema as typeof ClusterSchema, fields as never);
    const want = create(schema as typeof ClusterSchema, fields as never);
    expect(equals(schema as typeof ClusterSchema, made, want)).toBe(true);
    expect(toBinary(schema as typeof ClusterSchema, made)).toStrictEqual(
      toBinary(schema as typeof ClusterSchema, want),
    );
  });

  it("gives each message its own top level, and shares only frozen zero values", () => {
    const a = message(ClusterSchema, { name: "a" });
    const b = message(ClusterSchema, { name: "b" });
    expect([a.name, b.name]).toEqual(["a", "b"]);
    a.name = "changed";
    expect(b.name).toBe("b");
    expect(() => a.transportSocketMatches.push(create(ClusterSchema) as never)).toThrow(TypeError);
    expect(message(ClusterSchema, {}).transportSocketMatches).toEqual([]);
    expect(Object.isFrozen(adsConfigSource())).toBe(true);
  });

  it("blank(): fields set one by one equal create() and encode to the same bytes", () => {
    const made = blank(SocketAddressSchema);
    made.address = "10.0.0.1";
    made.portSpecifier = { case: "portValue", value: 80 };
    const want = create(SocketAddressSchema, {
      address: "10.0.0.1",
      portSpecifier: { case: "portValue", value: 80 },
    });
    expect(equals(SocketAddressSchema, made, want)).toBe(true);
    expect(toBinary(SocketAddressSchema, made)).toStrictEqual(toBinary(SocketAddressSchema, want));
    // Each blank is its own message over the shared zero.
    expect(blank(SocketAddressSchema).address).toBe("");
  });
});
