/**
 * The top-level fields of Istio's MeshConfig (istio.io/api mesh/v1alpha1 config.proto), by their
 * JSON (lowerCamelCase) names, and the proto names protobuf JSON accepts as well. istiod applies
 * the `mesh` YAML leniently (protomarshal.ApplyJSON retries with unknown fields allowed), so a key
 * outside this list is ignored, never an error; a listed one that edgepilot does not implement is
 * accepted and reported as unsupported.
 */

/** The fields edgepilot reads (MeshConfigModel). */
export const implementedMeshFields = [
  "trustDomain",
  "trustDomainAliases",
  "rootNamespace",
  "discoverySelectors",
  "outboundTrafficPolicy",
  "defaultServiceExportTo",
  "defaultVirtualServiceExportTo",
  "defaultDestinationRuleExportTo",
  "enableAutoMtls",
] as const;

/** Every other MeshConfig field: accepted and not implemented. */
const otherMeshFields = [
  "proxyListenPort",
  "proxyInboundListenPort",
  "proxyHttpPort",
  "connectTimeout",
  "protocolDetectionTimeout",
  "tcpKeepalive",
  "ingressClass",
  "ingressService",
  "ingressControllerMode",
  "ingressSelector",
  "enableTracing",
  "accessLogFile",
  "accessLogFormat",
  "accessLogEncoding",
  "enableEnvoyAccessLogService",
  "disableEnvoyListenerLog",
  "defaultConfig",
  "inboundTrafficPolicy",
  "configSources",
  "caCertificates",
  "localityLbSetting",
  "dnsRefreshRate",
  "h2UpgradePolicy",
  "inboundClusterStatName",
  "outboundClusterStatName",
  "certificates",
  "serviceSettings",
  "enablePrometheusMerge",
  "verifyCertificateAtClient",
  "ca",
  "extensionProviders",
  "defaultProviders",
  "pathNormalization",
  "defaultHttpRetryPolicy",
  "meshMTLS",
  "tlsDefaults",
  "compliancePolicy",
] as const;

/** The protobuf field name of a JSON name: `trustDomain` ▶ `trust_domain`; `meshMTLS` is `mesh_mTLS`. */
function protoName(json: string): string {
  return json === "meshMTLS" ? "mesh_mTLS" : json.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** JSON name by every spelling protobuf JSON accepts (a null-prototype record). */
const byName: Readonly<Record<string, string>> = Object.assign(
  Object.create(null),
  Object.fromEntries(
    [...implementedMeshFields, ...otherMeshFields].flatMap((f) => [
      [f, f],
      [protoName(f), f],
    ]),
  ),
);

/** The JSON name of a MeshConfig field spelled either way, or undefined for a key MeshConfig does not have. */
export function meshFieldName(key: string): string | undefined {
  return byName[key];
}

const implemented: ReadonlySet<string> = new Set(implementedMeshFields);

/** Whether edgepilot reads the field (by its JSON name). */
export function isImplementedMeshField(name: string): boolean {
  return implemented.has(name);
}
