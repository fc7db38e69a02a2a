import { create, type DescMessage, type Message, toBinary } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { ClusterSchema } from "../../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import { ClusterLoadAssignmentSchema } from "../../../lib/gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { ListenerSchema } from "../../../lib/gen/envoy/config/listener/v3/listener_pb.ts";
import { RouteConfigurationSchema } from "../../../lib/gen/envoy/config/route/v3/route_pb.ts";
import { type Encodable, encodeAll, isBatched } from "../../../lib/xds/encode-batch.ts";
import { ctx, endpoint, port, service, shards, view } from "./builders.ts";
import { generateAll } from "./checked-generators.ts";

/** Every resource the four generators make for a view of two ports and three endpoints, in push order. */
function generated(): Encodable[] {
  const v = view({
    services: [service({ ports: [port(), port({ name: "http", port: 8080, protocol: "HTTP" })] })],
    shards: shards({
      "Kubernetes/c1": [
        endpoint({ address: "10.0.0.1" }),
        endpoint({ address: "10.0.0.2", health: "UNHEALTHY" }),
        endpoint({ address: "10.0.0.1", port: 8080, servicePortName: "http" }),
      ],
    }),
  });
  return generateAll(v, ctx).flatMap(({ resources }) => resources);
}

const item = <D extends DescMessage>(schema: D, init: Record<string, unknown> = {}): Encodable => ({
  schema,
  message: create(schema, init) as Message,
});

const cases: { name: string; items: () => Encodable[] }[] = [
  { name: "nothing", items: () => [] },
  { name: "one resource (encoded alone)", items: () => generated().slice(0, 1) },
  { name: "every type, interleaved as a chunk gives them", items: generated },
  {
    name: "empty messages of every batched type",
    items: () => [
      item(ClusterSchema),
      item(ClusterLoadAssignmentSchema),
      item(ListenerSchema),
      item(RouteConfigurationSchema),
    ],
  },
  {
    name: "a type the batch has no field for, among batched ones",
    items: () => [
      item(ClusterSchema, { name: "a" }),
      item(DurationSchema, { seconds: 3n }),
      item(ClusterSchema, { name: "b" }),
    ],
  },
];

describe("encodeAll", () => {
  it.each(cases)("$name: each body is toBinary's bytes, in a buffer of its own", ({ items }) => {
    const input = items();
    const bodies = encodeAll(input);
    expect(bodies).toHaveLength(input.length);
    input.forEach(({ schema, message }, i) => {
      const body = bodies[i] as Uint8Array;
      expect(Buffer.from(body).toString("hex")).toBe(Buffer.from(toBinary(schema, message)).toString("hex"));
      expect(body.byteOffset).toBe(0);
      expect(body.buffer.byteLength).toBe(body.byteLength);
    });
  });

  it("batches the four served resource types and nothing else", () => {
    for (const schema of [
      ClusterSchema,
      ClusterLoadAssignmentSchema,
      ListenerSchema,
      RouteConfigurationSchema,
    ])
      expect(isBatched(schema)).toBe(true);
    expect(isBatched(DurationSchema)).toBe(false);
  });
});
