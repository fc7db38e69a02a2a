/**
 * mergeGateways as istiod's TestMergeGateways and TestMergeGatewaysHttpsFirstBug table them
 * (pilot/pkg/model/gateway_test.go at 1.30.3: the merged server count, the servers in all, the
 * servers per RDS name), plus the model's host sanitizing and port translation (resolvePorts).
 */
import { describe, expect, it } from "vitest";
import {
  type GatewayModel,
  sanitizeHosts,
  selectsWorkload,
  toGateway,
} from "../../../../lib/registry/istio/gateway.ts";
import { mergeGateways, resolvePort } from "../../../../lib/registry/istio/gateway-merge.ts";

/** makeConfig: one server with `tls.mode` set (as istiod's table sets it on every server). */
function makeConfig(
  name: string,
  namespace: string,
  host: string,
  portName: string,
  protocol: string,
  number: number,
  bind: string,
  mode: string,
): GatewayModel {
  return toGateway(
    { name, namespace },
    {
      selector: { istio: "ingressgateway" },
      servers: [
        { hosts: [host], port: { name: portName, number, protocol }, ...(bind && { bind }), tls: { mode } },
      ],
    },
  );
}

const gwHTTPFoo = makeConfig("foo1", "not-default", "foo.bar.com", "name1", "http", 7, "", "SIMPLE");
const gwHTTPbar = makeConfig("bar1", "not-default", "bar.foo.com", "bname1", "http", 7, "", "SIMPLE");
const gwHTTPlocalbar = makeConfig(
  "lcoalbar1",
  "not-default",
  "localbar.foo.com",
  "bname1",
  "http",
  7,
  "127.0.0.1",
  "SIMPLE",
);
const gwHTTP2Wildcard = makeConfig("foo5", "not-default", "*", "name5", "http2", 8, "", "SIMPLE");
const gwHTTPWildcard = makeConfig("foo3", "not-default", "*", "name3", "http", 8, "", "SIMPLE");
const gwTCPWildcard = makeConfig("foo4", "not-default-2", "*", "name4", "tcp", 8, "", "SIMPLE");
const gwHTTPWildcardAlternate = makeConfig("foo2", "not-default", "*", "name2", "http", 7, "", "SIMPLE");
const gwSimple = makeConfig(
  "foo-simple",
  "not-default-2",
  "*.example.com",
  "https",
  "HTTPS",
  443,
  "",
  "SIMPLE",
);
const gwPassthrough = makeConfig(
  "foo-passthrough",
  "not-default-2",
  "foo.example.com",
  "tls-foo",
  "TLS",
  443,
  "",
  "PASSTHROUGH",
);

describe("mergeGateways (TestMergeGateways)", () => {
  it.each([
    ["single-server-config", [gwHTTPFoo], 1, 1, { "http.7": 1 }],
    ["two servers on the same port", [gwHTTPFoo, gwHTTPbar], 1, 2, { "http.7": 2 }],
    [
      "two servers on the same port with different bind",
      [gwHTTPbar, gwHTTPlocalbar],
      2,
      2,
      { "http.7": 1, "http.7.127.0.0.1": 1 },
    ],
    ["same-server-config", [gwHTTPFoo, gwHTTPWildcardAlternate], 1, 2, { "http.7": 2 }],
    [
      "multi-server-config",
      [gwHTTPFoo, gwHTTPWildcardAlternate, gwHTTPWildcard],
      2,
      3,
      { "http.7": 2, "http.8": 1 },
    ],
    ["http-tcp-wildcard-server-config", [gwHTTPFoo, gwTCPWildcard], 2, 2, { "http.7": 1 }],
    ["tcp-http-server-config", [gwTCPWildcard, gwHTTPWildcard], 1, 1, {}],
    ["tcp-tcp-server-config", [gwHTTPWildcard, gwTCPWildcard], 1, 1, { "http.8": 1 }],
    ["http-http2-server-config", [gwHTTPWildcard, gwHTTP2Wildcard], 1, 1, { "http.8": 1 }],
    [
      "simple-passthrough",
      [gwSimple, gwPassthrough],
      2,
      2,
      { "https.443.https.foo-simple.not-default-2": 1 },
    ],
  ] as [
    string,
    GatewayModel[],
    number,
    number,
    Record<string, number>,
  ][])("%s", (_, gateways, mergedServers, servers, byRoute) => {
    const m = mergeGateways(gateways);
    expect(m.ports).toHaveLength(mergedServers);
    expect(m.ports.reduce((n, p) => n + p.servers.length, 0)).toBe(servers);
    expect(Object.fromEntries([...m.serversByRoute].map(([k, v]) => [k, v.length]))).toEqual(byRoute);
  });

  it("a server left out is said once, as istiod logs it", () => {
    expect(mergeGateways([gwHTTPWildcard, gwTCPWildcard]).skipped).toEqual([
      "skipping server on gateway not-default-2/foo4, duplicate host names: *",
    ]);
  });

  it.each([
    ["https-first-then-http", true],
    ["http-first-then-https", false],
  ])("%s: one merged server per bind, both routes (TestMergeGatewaysHttpsFirstBug)", (_, httpsFirst) => {
    const https = makeConfig(
      "foo-https",
      "not-default",
      "*.example.com",
      "https-port",
      "HTTPS",
      443,
      "10.0.0.1",
      "SIMPLE",
    );
    const http = makeConfig(
      "foo-http",
      "not-default",
      "*.example.com",
      "http-port",
      "HTTP",
      443,
      "10.0.0.2",
      "SIMPLE",
    );
    const m = mergeGateways(httpsFirst ? [https, http] : [http, https]);
    expect(m.ports.map((p) => [p.port.number, p.port.protocol, p.port.bind]).sort()).toEqual([
      [443, "HTTP", "10.0.0.2"],
      [443, "HTTPS", "10.0.0.1"],
    ]);
    expect([...m.serversByRoute.keys()].sort()).toEqual([
      "http.443.10.0.0.2",
      "https.443.https-port.foo-https.not-default.10.0.0.1",
    ]);
  });

  it("AUTO_PASSTHROUGH marks the merged gateway (its SNI DNAT clusters)", () => {
    const g = makeConfig("gw", "istio-system", "*.local", "tls", "TLS", 15443, "", "AUTO_PASSTHROUGH");
    expect(mergeGateways([g]).autoPassthrough).toBe(true);
    expect(mergeGateways([gwSimple]).autoPassthrough).toBe(false);
  });
});

describe("resolvePorts (legacy selector)", () => {
  it("a port a service instance serves binds its target port, the first one found; else the port as written", () => {
    const instances = [
      { port: 80, targetPort: 8080 },
      { port: 80, targetPort: 9090 },
      { port: 443, targetPort: 8443 },
    ];
    expect(resolvePort(80, instances)).toBe(8080);
    expect(resolvePort(443, instances)).toBe(8443);
    expect(resolvePort(15021, instances)).toBe(15021);
    const gw = makeConfig("gw", "ns", "a.example.com", "http", "HTTP", 80, "", "SIMPLE");
    const m = mergeGateways([gw], instances);
    expect(m.ports.map((p) => p.port.number)).toEqual([8080]);
    expect([...m.serversByRoute.keys()]).toEqual(["http.8080"]);
  });

  it("an HTTPS route name keeps the port as written (gatewayRDSRouteName)", () => {
    const m = mergeGateways([gwSimple], [{ port: 443, targetPort: 8443 }]);
    expect([...m.serversByRoute.keys()]).toEqual(["https.443.https.foo-simple.not-default-2"]);
    expect(m.ports[0]?.port.number).toBe(8443);
  });
});

describe("the model", () => {
  it.each([
    [["./a.example.com"], ["ns/a.example.com"]],
    [["*/a.example.com"], ["a.example.com"]],
    [["other/a.example.com", "*/*", "b"], ["*"]],
    [["other/*"], ["other/*"]],
  ])("sanitizeServerHostNamespace %j ▶ %j", (hosts, want) => {
    expect(sanitizeHosts(hosts, "ns")).toEqual(want);
  });

  it("a selector selects workloads whose labels include it; an empty one selects every gateway", () => {
    const g = toGateway(
      { name: "g", namespace: "ns" },
      { selector: { istio: "ingressgateway" }, servers: [] },
    );
    expect(selectsWorkload(g, { istio: "ingressgateway", app: "x" })).toBe(true);
    expect(selectsWorkload(g, { istio: "egressgateway" })).toBe(false);
    expect(selectsWorkload(toGateway({ name: "g", namespace: "ns" }, { servers: [] }), {})).toBe(true);
  });

  it("credentialNames win over credentialName; a tls block without a mode is PASSTHROUGH", () => {
    const g = toGateway(
      { name: "g", namespace: "ns" },
      {
        servers: [
          {
            port: { number: 443, name: "a", protocol: "HTTPS" },
            hosts: ["a"],
            tls: { mode: "SIMPLE", credentialName: "one", credentialNames: ["rsa", "ecdsa"] },
          },
          { port: { number: 443, name: "b", protocol: "TLS" }, hosts: ["b"], tls: {} },
        ],
      },
    );
    expect(g.servers[0]?.tls?.credentialNames).toEqual(["rsa", "ecdsa"]);
    expect(g.servers[1]?.tls?.mode).toBe("PASSTHROUGH");
  });
});
