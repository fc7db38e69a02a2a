/**
 * Every Envoy message we generate, in one registry built once per process (module scope): the
 * root files scripts/gen.mjs generates and everything they import. Any fields are unpacked with
 * it, so a typed_config of any generated type is validated too. Static imports only, so the same
 * module runs under Node and on workerd.
 */
import { createRegistry, type DescFile, type Registry } from "@bufbuild/protobuf";
import { file_envoy_config_bootstrap_v3_bootstrap } from "../../../lib/gen/envoy/config/bootstrap/v3/bootstrap_pb.ts";
import { file_envoy_config_cluster_v3_cluster } from "../../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import { file_envoy_config_endpoint_v3_endpoint } from "../../../lib/gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { file_envoy_config_listener_v3_listener } from "../../../lib/gen/envoy/config/listener/v3/listener_pb.ts";
import { file_envoy_config_route_v3_route } from "../../../lib/gen/envoy/config/route/v3/route_pb.ts";
import { file_envoy_extensions_filters_http_fault_v3_fault } from "../../../lib/gen/envoy/extensions/filters/http/fault/v3/fault_pb.ts";
import { file_envoy_extensions_filters_http_rbac_v3_rbac } from "../../../lib/gen/envoy/extensions/filters/http/rbac/v3/rbac_pb.ts";
import { file_envoy_extensions_filters_http_router_v3_router } from "../../../lib/gen/envoy/extensions/filters/http/router/v3/router_pb.ts";
import { file_envoy_extensions_filters_listener_http_inspector_v3_http_inspector } from "../../../lib/gen/envoy/extensions/filters/listener/http_inspector/v3/http_inspector_pb.ts";
import { file_envoy_extensions_filters_listener_original_dst_v3_original_dst } from "../../../lib/gen/envoy/extensions/filters/listener/original_dst/v3/original_dst_pb.ts";
import { file_envoy_extensions_filters_listener_tls_inspector_v3_tls_inspector } from "../../../lib/gen/envoy/extensions/filters/listener/tls_inspector/v3/tls_inspector_pb.ts";
import { file_envoy_extensions_filters_network_http_connection_manager_v3_http_connection_manager } from "../../../lib/gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import { file_envoy_extensions_filters_network_rbac_v3_rbac } from "../../../lib/gen/envoy/extensions/filters/network/rbac/v3/rbac_pb.ts";
import { file_envoy_extensions_filters_network_tcp_proxy_v3_tcp_proxy } from "../../../lib/gen/envoy/extensions/filters/network/tcp_proxy/v3/tcp_proxy_pb.ts";
import { file_envoy_extensions_path_match_uri_template_v3_uri_template_match } from "../../../lib/gen/envoy/extensions/path/match/uri_template/v3/uri_template_match_pb.ts";
import { file_envoy_extensions_retry_host_previous_hosts_v3_previous_hosts } from "../../../lib/gen/envoy/extensions/retry/host/previous_hosts/v3/previous_hosts_pb.ts";
import { file_envoy_extensions_transport_sockets_raw_buffer_v3_raw_buffer } from "../../../lib/gen/envoy/extensions/transport_sockets/raw_buffer/v3/raw_buffer_pb.ts";
import { file_envoy_extensions_transport_sockets_tls_v3_tls } from "../../../lib/gen/envoy/extensions/transport_sockets/tls/v3/tls_pb.ts";
import { file_envoy_extensions_upstreams_http_v3_http_protocol_options } from "../../../lib/gen/envoy/extensions/upstreams/http/v3/http_protocol_options_pb.ts";
import { file_envoy_service_cluster_v3_cds } from "../../../lib/gen/envoy/service/cluster/v3/cds_pb.ts";
import { file_envoy_service_discovery_v3_ads } from "../../../lib/gen/envoy/service/discovery/v3/ads_pb.ts";
import { file_envoy_service_endpoint_v3_eds } from "../../../lib/gen/envoy/service/endpoint/v3/eds_pb.ts";
import { file_envoy_service_listener_v3_lds } from "../../../lib/gen/envoy/service/listener/v3/lds_pb.ts";
import { file_envoy_service_route_v3_rds } from "../../../lib/gen/envoy/service/route/v3/rds_pb.ts";
import { file_envoy_service_secret_v3_sds } from "../../../lib/gen/envoy/service/secret/v3/sds_pb.ts";

/** The roots scripts/gen.mjs generates (test/unit/support/pgv-kinds.test.ts checks none is missing). */
export const envoyRootFiles: readonly DescFile[] = [
  file_envoy_service_discovery_v3_ads,
  file_envoy_service_cluster_v3_cds,
  file_envoy_service_endpoint_v3_eds,
  file_envoy_service_listener_v3_lds,
  file_envoy_service_route_v3_rds,
  file_envoy_config_cluster_v3_cluster,
  file_envoy_config_endpoint_v3_endpoint,
  file_envoy_config_listener_v3_listener,
  file_envoy_config_route_v3_route,
  file_envoy_extensions_filters_network_http_connection_manager_v3_http_connection_manager,
  file_envoy_extensions_filters_network_tcp_proxy_v3_tcp_proxy,
  file_envoy_extensions_filters_listener_original_dst_v3_original_dst,
  file_envoy_extensions_filters_listener_http_inspector_v3_http_inspector,
  file_envoy_extensions_filters_listener_tls_inspector_v3_tls_inspector,
  file_envoy_extensions_retry_host_previous_hosts_v3_previous_hosts,
  file_envoy_extensions_filters_http_router_v3_router,
  file_envoy_extensions_filters_http_fault_v3_fault,
  file_envoy_config_bootstrap_v3_bootstrap,
  file_envoy_extensions_upstreams_http_v3_http_protocol_options,
  file_envoy_extensions_transport_sockets_tls_v3_tls,
  file_envoy_extensions_transport_sockets_raw_buffer_v3_raw_buffer,
  file_envoy_extensions_filters_http_rbac_v3_rbac,
  file_envoy_extensions_filters_network_rbac_v3_rbac,
  file_envoy_extensions_path_match_uri_template_v3_uri_template_match,
  file_envoy_service_secret_v3_sds,
];

/** The roots and every file they import, transitively, each once. */
export function closure(roots: readonly DescFile[]): DescFile[] {
  const seen = new Map<string, DescFile>();
  const visit = (f: DescFile) => {
    if (seen.has(f.name)) return;
    seen.set(f.name, f);
    for (const d of f.dependencies) visit(d);
  };
  for (const f of roots) visit(f);
  return [...seen.values()];
}

let built: { files: DescFile[]; registry: Registry } | undefined;

/** The files and the registry of every generated Envoy message; built on first use, then shared. */
export function envoyTypes(): { files: DescFile[]; registry: Registry } {
  if (!built) {
    const files = closure(envoyRootFiles);
    built = { files, registry: createRegistry(...files) };
  }
  return built;
}
