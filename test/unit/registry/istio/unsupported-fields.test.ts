import { describe, expect, it } from "vitest";
import { unsupportedFields } from "../../../../lib/registry/istio/unsupported-fields.ts";
import { destinationRule, httpRoute, sidecar, virtualService } from "./builders.ts";

describe("unsupportedFields", () => {
  it("lists nothing for implemented fields", () => {
    const vs = virtualService({
      gateways: ["mesh"],
      http: [
        httpRoute({
          match: [{ uri: { prefix: "/a" }, headers: { x: { exact: "1" } }, port: 80, ignoreUriCase: true }],
          timeout: "1s",
          retries: { attempts: 1, retryOn: "unavailable", perTryTimeout: "1s" },
          fault: { abort: { grpcStatus: "UNAVAILABLE", percentage: { value: 1 } } },
        }),
      ],
    });
    expect(unsupportedFields("VirtualService", vs.spec)).toEqual([]);
    expect(
      unsupportedFields(
        "DestinationRule",
        destinationRule({ trafficPolicy: { loadBalancer: { simple: "RANDOM" } } }).spec,
      ),
    ).toEqual([]);
    expect(unsupportedFields("Sidecar", sidecar().spec)).toEqual([]);
  });

  it.each([
    [
      "VirtualService",
      virtualService({
        tcp: [{ route: [] }],
        gateways: ["mesh", "ns/gw"],
        http: [httpRoute({ mirror: { host: "a" }, match: [{ method: { exact: "GET" } }], corsPolicy: {} })],
      }).spec,
      ["spec.tcp", "spec.http[0].mirror", "spec.http[0].match[0].method", "spec.http[0].corsPolicy"],
    ],
    [
      "VirtualService",
      // Bound to gateways only: gateway proxies serve its tls and tcp routes, not their other fields.
      virtualService({
        gateways: ["ns/gw"],
        tls: [
          {
            match: [{ sniHosts: ["a.example.com"], sourceLabels: { a: "b" } }],
            route: [{ destination: { host: "a" } }],
          },
        ],
        tcp: [
          {
            match: [{ port: 31400, destinationSubnets: ["10.0.0.0/8"] }],
            route: [{ destination: { host: "b" }, weight: 100 }],
          },
        ],
      }).spec,
      ["spec.tls[0].match[0].sourceLabels", "spec.tcp[0].match[0].destinationSubnets"],
    ],
    [
      "VirtualService",
      virtualService({
        http: [{ redirect: { uri: "/x" } }, { directResponse: { status: 503 } }, { delegate: { name: "d" } }],
      }).spec,
      ["spec.http[2].delegate"],
    ],
    [
      "DestinationRule",
      destinationRule({
        workloadSelector: { matchLabels: { a: "b" } },
        trafficPolicy: {
          tls: { mode: "ISTIO_MUTUAL" },
          connectionPool: { tcp: { maxConnections: 1 }, http: { http2MaxRequests: 1, maxRetries: 2 } },
          loadBalancer: {
            consistentHash: { httpCookie: { name: "c" } },
            localityLbSetting: { enabled: true },
          },
        },
      }).spec,
      [
        "spec.trafficPolicy.tls",
        "spec.trafficPolicy.connectionPool.tcp",
        "spec.trafficPolicy.connectionPool.http.maxRetries",
        "spec.trafficPolicy.loadBalancer.consistentHash.httpCookie",
        "spec.trafficPolicy.loadBalancer.localityLbSetting",
        "spec.workloadSelector",
      ],
    ],
    [
      "Sidecar",
      sidecar({
        // Ingress listeners are served to Envoy sidecars; their TLS is not.
        ingress: [{ port: { number: 80 }, defaultEndpoint: "127.0.0.1:8080", tls: { mode: "SIMPLE" } }],
        egress: [{ port: { number: 80 }, hosts: ["./*"] }],
        // Its outbound traffic policy's mode is served to Envoy sidecars; an egress proxy is not.
        outboundTrafficPolicy: {
          mode: "ALLOW_ANY",
          egressProxy: { host: "egress.example", port: { number: 80 } },
        },
      }).spec,
      ["spec.ingress[0].tls", "spec.egress[0].port", "spec.outboundTrafficPolicy.egressProxy"],
    ],
  ] as const)("%s lists what is not implemented", (kind, spec, want) =>
    expect(unsupportedFields(kind, spec).sort()).toEqual([...want].sort()));

  it("does not list proto3 defaults", () =>
    expect(
      unsupportedFields(
        "VirtualService",
        virtualService({ tcp: [], tls: null, http: [httpRoute({ mirror: null, corsPolicy: undefined })] })
          .spec,
      ),
    ).toEqual([]));
});
