/**
 * Proxyless gRPC server listeners and TLS contexts (generators/server-listener.ts, grpc-tls.ts):
 * the shapes Istio's grpcgen tests expect (lds_test.go, tls_test.go), Envoy's PGV rules, and
 * @grpc/grpc-js-xds's own Listener validation with the bootstrap's certificate provider `default`.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { anyPack, anyUnpack } from "@bufbuild/protobuf/wkt";
import { register } from "@grpc/grpc-js-xds";
import { ListenerResourceType } from "@grpc/grpc-js-xds/build/src/xds-resource-type/listener-resource-type.js";
import type { XdsDecodeContext } from "@grpc/grpc-js-xds/build/src/xds-resource-type/xds-resource-type.js";
import { beforeAll, describe, expect, it } from "vitest";
import { type Listener, ListenerSchema } from "../../../lib/gen/envoy/config/listener/v3/listener_pb.ts";
import { RouterSchema } from "../../../lib/gen/envoy/extensions/filters/http/router/v3/router_pb.ts";
import {
  HttpConnectionManagerSchema,
  HttpFilterSchema,
} from "../../../lib/gen/envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager_pb.ts";
import {
  type CommonTlsContext,
  DownstreamTlsContextSchema,
} from "../../../lib/gen/envoy/extensions/transport_sockets/tls/v3/tls_pb.ts";
import { commonTlsContext } from "../../../lib/resources/generators/grpc-tls.ts";
import { ROUTER_FILTER_NAME } from "../../../lib/resources/generators/listener.ts";
import {
  parseServerListenerName,
  SERVER_LISTENER_PREFIX,
  serverListener,
  serverTlsMode,
} from "../../../lib/resources/generators/server-listener.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { pgvViolations } from "../../support/pgv/index.ts";

const withProvider = {
  server: {},
  bootstrap: { certificateProviders: { default: { plugin_name: "file_watcher", config: {} } } },
} as unknown as XdsDecodeContext;
const withoutProvider = {
  server: {},
  bootstrap: { certificateProviders: {} },
} as unknown as XdsDecodeContext;

const decode = (l: Listener, context = withProvider) =>
  ListenerResourceType.get().decode(context, {
    type_url: TypeUrl.listener,
    value: Buffer.from(toBinary(ListenerSchema, l)),
  });

const hcmOf = (l: Listener) => {
  const f = l.filterChains[0]?.filters[0];
  if (f?.configType.case !== "typedConfig") throw new Error("no typed config");
  return anyUnpack(f.configType.value, HttpConnectionManagerSchema);
};

const name = (host: string, port: number) => `${SERVER_LISTENER_PREFIX}${host}:${port}`;

/** The identity and root names of a CommonTlsContext, current fields and deprecated ones. */
function providerNames(c: CommonTlsContext) {
  const combined =
    c.validationContextType.case === "combinedValidationContext" ? c.validationContextType.value : undefined;
  return {
    identity: [c.tlsCertificateProviderInstance, c.tlsCertificateCertificateProviderInstance].map(
      (p) => `${p?.instanceName}/${p?.certificateName}`,
    ),
    root: [
      combined?.defaultValidationContext?.caCertificateProviderInstance,
      combined?.validationContextCertificateProviderInstance,
    ].map((p) => `${p?.instanceName}/${p?.certificateName}`),
    sans: combined?.defaultValidationContext?.matchSubjectAltNames.map((m) => m.matchPattern.value) ?? [],
  };
}

describe("server listener names (grpcgen buildInboundListeners: net.SplitHostPort of the name)", () => {
  it.each([
    [name("10.0.0.5", 8080), { host: "10.0.0.5", port: 8080 }],
    [name("0.0.0.0", 50051), { host: "0.0.0.0", port: 50051 }],
    [name("[::]", 50051), { host: "::", port: 50051 }],
    [name("[fd00::5]", 1), { host: "fd00::5", port: 1 }],
    [name("10.0.0.5", 0), undefined],
    [name("10.0.0.5", 65536), undefined],
    [`${SERVER_LISTENER_PREFIX}10.0.0.5`, undefined],
    [`${SERVER_LISTENER_PREFIX}10.0.0.5:http`, undefined],
    [`${SERVER_LISTENER_PREFIX}fd00::5:80`, undefined],
    [name("reviews", 80), undefined],
    ["reviews.default.svc.cluster.local:9080", undefined],
  ])("%s", (n, want) => {
    expect(parseServerListenerName(n)).toEqual(want);
  });
});

describe("server TLS mode (grpcgen buildInboundFilterChains)", () => {
  const istio = { "security.istio.io/tlsMode": "istio" };
  it.each([
    ["STRICT", {}, "STRICT"],
    ["STRICT", istio, "STRICT"],
    ["PERMISSIVE", {}, "DISABLE"],
    ["PERMISSIVE", istio, "STRICT"],
    ["DISABLE", {}, "DISABLE"],
    ["DISABLE", istio, "DISABLE"],
  ] as const)("%s with labels %j ▶ %s", (mode, labels, want) => {
    expect(serverTlsMode(mode, labels)).toBe(want);
  });
});

describe("server listener shape", () => {
  beforeAll(() => register());
  const address = { host: "0.0.0.0", port: 50051 };
  const strict = serverListener({ name: name("0.0.0.0", 50051), address, mode: "STRICT", httpFilters: [] });
  const plain = serverListener({ name: name("0.0.0.0", 50051), address, mode: "DISABLE", httpFilters: [] });

  it("STRICT: one chain inbound-mtls whose DownstreamTlsContext requires a client certificate", () => {
    expect(strict.name).toBe(`${SERVER_LISTENER_PREFIX}0.0.0.0:50051`);
    expect(strict.address?.address.case).toBe("socketAddress");
    expect(strict.address?.address.value).toMatchObject({
      address: "0.0.0.0",
      portSpecifier: { value: 50051 },
    });
    expect(strict.filterChains.map((c) => c.name)).toEqual(["inbound-mtls"]);
    const chain = strict.filterChains[0];
    expect(chain?.filterChainMatch).toBeUndefined();
    expect(chain?.filters.map((f) => f.name)).toEqual(["inbound-hcmmtls"]);
    expect(chain?.transportSocket?.name).toBe("envoy.transport_sockets.tls");
    const ts = chain?.transportSocket?.configType;
    if (ts?.case !== "typedConfig") throw new Error("no tls context");
    const tls = anyUnpack(ts.value, DownstreamTlsContextSchema);
    expect(tls?.requireClientCertificate).toBe(true);
    expect(providerNames(tls?.commonTlsContext as CommonTlsContext)).toEqual({
      identity: ["default/default", "default/default"],
      root: ["default/ROOTCA", "default/ROOTCA"],
      sans: [],
    });
    expect(strict.listenerFilters).toEqual([]);
    expect(strict.useOriginalDst).toBeUndefined();
  });

  it("DISABLE (and PERMISSIVE without tlsMode): one chain inbound-plaintext, no transport socket", () => {
    expect(plain.filterChains.map((c) => c.name)).toEqual(["inbound-plaintext"]);
    expect(plain.filterChains[0]?.filters.map((f) => f.name)).toEqual(["inbound-hcmplaintext"]);
    expect(plain.filterChains[0]?.transportSocket).toBeUndefined();
  });

  it("the connection manager routes every path to the server itself, the router last", () => {
    const hcm = hcmOf(strict);
    expect(hcm?.routeSpecifier.case).toBe("routeConfig");
    const rc = hcm?.routeSpecifier.value as {
      name: string;
      virtualHosts: { domains: string[]; routes: unknown[] }[];
    };
    expect(rc.name).toBe("inbound");
    expect(rc.virtualHosts[0]?.domains).toEqual(["*"]);
    expect(rc.virtualHosts[0]?.routes).toHaveLength(1);
    expect(hcm?.httpFilters.map((f) => f.name)).toEqual([ROUTER_FILTER_NAME]);
  });

  it("the filters given (the workload's RBAC) run before the router, in their order", () => {
    const rbac = (n: string) =>
      create(HttpFilterSchema, {
        name: n,
        configType: { case: "typedConfig", value: anyPack(RouterSchema, create(RouterSchema)) },
      });
    const l = serverListener({
      name: name("0.0.0.0", 50051),
      address,
      mode: "STRICT",
      httpFilters: [rbac("envoy.filters.http.rbac.DENY"), rbac("envoy.filters.http.rbac")],
    });
    expect(hcmOf(l)?.httpFilters.map((f) => f.name)).toEqual([
      "envoy.filters.http.rbac.DENY",
      "envoy.filters.http.rbac",
      ROUTER_FILTER_NAME,
    ]);
    expect(pgvViolations(ListenerSchema, l)).toEqual([]);
  });

  it("passes Envoy's PGV rules and grpc-js-xds's validation (with the provider `default`)", () => {
    for (const l of [strict, plain]) {
      expect(pgvViolations(ListenerSchema, l)).toEqual([]);
      const r = decode(fromBinary(ListenerSchema, toBinary(ListenerSchema, l)));
      expect(r.error, l.filterChains[0]?.name).toBeUndefined();
    }
  });

  it("grpc-js-xds refuses the mTLS chain when its bootstrap has no provider `default` (the check is live)", () => {
    expect(decode(strict, withoutProvider).error).toMatch(/Unmatched .*instance_name: default/);
    expect(decode(plain, withoutProvider).error).toBeUndefined();
  });
});

describe("commonTlsContext (grpcgen buildCommonTLSContext)", () => {
  it("names the identity and root in the current and the deprecated fields, SANs exact", () => {
    expect(providerNames(commonTlsContext(["spiffe://trust-domain/ns/default/sa/service"]))).toEqual({
      identity: ["default/default", "default/default"],
      root: ["default/ROOTCA", "default/ROOTCA"],
      sans: ["spiffe://trust-domain/ns/default/sa/service"],
    });
    const c = commonTlsContext(["spiffe://a"]);
    const combined = c.validationContextType.value as {
      defaultValidationContext: { matchSubjectAltNames: { matchPattern: { case: string } }[] };
    };
    expect(combined.defaultValidationContext.matchSubjectAltNames[0]?.matchPattern.case).toBe("exact");
  });

  it("the combined context names ROOTCA as an SDS secret too (Envoy's rules require one; gRPC ignores it)", () => {
    const v = commonTlsContext([]).validationContextType;
    if (v.case !== "combinedValidationContext") throw new Error("no combined validation context");
    expect(v.value.validationContextSdsSecretConfig?.name).toBe("ROOTCA");
    expect(v.value.validationContextSdsSecretConfig?.sdsConfig).toBeUndefined();
  });

  it("without SANs: no matcher, both fields still set", () => {
    expect(providerNames(commonTlsContext([]))).toEqual({
      identity: ["default/default", "default/default"],
      root: ["default/ROOTCA", "default/ROOTCA"],
      sans: [],
    });
  });
});
