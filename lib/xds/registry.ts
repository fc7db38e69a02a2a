/** The protobuf type registry for xDS payloads, so Any-packed resources render as JSON (Connect, REST). */
import { createRegistry, type Registry } from "@bufbuild/protobuf";
import { ClusterSchema } from "../gen/envoy/config/cluster/v3/cluster_pb.ts";
import { ClusterLoadAssignmentSchema } from "../gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { ListenerSchema } from "../gen/envoy/config/listener/v3/listener_pb.ts";
import { RouteConfigurationSchema } from "../gen/envoy/config/route/v3/route_pb.ts";
import { RouterSchema } from "../gen/envoy/extensions/filters/http/router/v3/router_pb.ts";
import { HttpConnectionManagerSchema } from "../gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";

/** Every message type we pack into an Any. */
export const xdsRegistry: Registry = createRegistry(
  ClusterSchema,
  ClusterLoadAssignmentSchema,
  ListenerSchema,
  RouteConfigurationSchema,
  HttpConnectionManagerSchema,
  RouterSchema,
);
