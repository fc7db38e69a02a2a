/**
 * kubernetesGatewayCheck, gatewayClassCheck and referenceGrantCheck against the Gateway API's own
 * CEL test cases (kubernetes-sigs/gateway-api v1.5.1 tests/cel/gateway_test.go) and the standard
 * CRDs' schemas: a valid object of each kind passes, each rule refuses with the CRD's message.
 * Where the API server reports several errors, the first one edgepilot names is one of them.
 */
import { describe, expect, it } from "vitest";
import { gatewayClassCheck } from "../../../../lib/registry/gateway-api/validate-gateway-class.ts";
import { kubernetesGatewayCheck } from "../../../../lib/registry/gateway-api/validate-kubernetes-gateway.ts";
import { referenceGrantCheck } from "../../../../lib/registry/gateway-api/validate-reference-grant.ts";

type Raw = Record<string, unknown>;
/** [name, spec fields over a valid Gateway's, undefined or [field, one of the messages the API server gives]]. */
type Case = [string, Raw, [string, ...string[]]?];

const object = (kind: string, spec: Raw | undefined): Raw => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind,
  metadata: { name: "x", namespace: "default" },
  ...(spec && { spec }),
});
const gateway = (spec: Raw) =>
  kubernetesGatewayCheck(
    object("Gateway", {
      gatewayClassName: "istio",
      listeners: [{ name: "http", protocol: "HTTP", port: 80 }],
      ...spec,
    }),
    "",
  );
const listeners = (...ls: Raw[]) => ({ listeners: ls });
const certs = { certificateRefs: [{ name: "foo" }] };
const L = "spec.listeners";

const gatewayCases: Case[] = [
  [
    "tls config present with http protocol",
    listeners({ name: "http", protocol: "HTTP", port: 8080, tls: certs }),
    [L, "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']"],
  ],
  [
    "an empty tls on http (defaulted to Terminate, so both rules refuse)",
    listeners({ name: "http", protocol: "HTTP", port: 8080, tls: {} }),
    [`${L}[0].tls`, "certificateRefs or options must be specified when mode is Terminate"],
  ],
  [
    "https protocol with Passthrough tls mode",
    listeners({ name: "https", protocol: "HTTPS", port: 8080, tls: { mode: "Passthrough" } }),
    [L, "tls mode must be Terminate for protocol HTTPS"],
  ],
  [
    "tls mode not set with https protocol and tls config present",
    listeners({ name: "https", protocol: "HTTPS", port: 8080, tls: certs }),
  ],
  [
    "tls config present with tcp protocol",
    listeners({ name: "tcp", protocol: "TCP", port: 8080, tls: certs }),
    [L, "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']"],
  ],
  ["tls config not set with https protocol", listeners({ name: "https", protocol: "HTTPS", port: 8443 })],
  [
    "tls config not set with tls protocol (v1.5 refuses; the releases before accept)",
    listeners({ name: "tls", protocol: "TLS", port: 8443 }),
  ],
  [
    "tls config not set with http, tcp and udp protocols",
    listeners(
      { name: "a", protocol: "HTTP", port: 1 },
      { name: "b", protocol: "TCP", port: 2 },
      { name: "c", protocol: "UDP", port: 3 },
    ),
  ],
  [
    "hostname present with tcp protocol",
    listeners({ name: "tcp", protocol: "TCP", port: 8080, hostname: "foo" }),
    [L, "hostname must not be specified for protocols ['TCP', 'UDP']"],
  ],
  [
    "hostname present with udp protocol",
    listeners({ name: "udp", protocol: "UDP", port: 8080, hostname: "foo" }),
    [L, "hostname must not be specified for protocols ['TCP', 'UDP']"],
  ],
  [
    "certificateRefs not set with HTTPS protocol and TLS terminate mode",
    listeners({ name: "https", protocol: "HTTPS", port: 8443, tls: { mode: "Terminate" } }),
    [`${L}[0].tls`, "certificateRefs or options must be specified when mode is Terminate"],
  ],
  [
    "certificateRefs not set with TLS protocol and TLS terminate mode",
    listeners({ name: "tls", protocol: "TLS", port: 8443, tls: { mode: "Terminate" } }),
    [`${L}[0].tls`, "certificateRefs or options must be specified when mode is Terminate"],
  ],
  [
    "certificateRefs set with TLS protocol and TLS terminate mode",
    listeners({ name: "tls", protocol: "TLS", port: 8443, tls: { mode: "Terminate", ...certs } }),
  ],
  [
    "options set with HTTPS protocol and TLS terminate mode",
    listeners({
      name: "https",
      protocol: "HTTPS",
      port: 8443,
      tls: { mode: "Terminate", options: { "a.example.com/x": "y" } },
    }),
  ],
  [
    "a Passthrough TLS listener",
    listeners({
      name: "tls",
      protocol: "TLS",
      port: 443,
      hostname: "*.example.com",
      tls: { mode: "Passthrough" },
    }),
  ],
  [
    "names are not unique within the Gateway",
    listeners({ name: "foo", protocol: "HTTP", port: 8080 }, { name: "foo", protocol: "HTTP", port: 8000 }),
    [L, "Listener name must be unique within the Gateway", "duplicate entries for key [name="],
  ],
  [
    "combination of port, protocol, and hostname are not unique for each listener",
    listeners(
      { name: "foo", protocol: "HTTP", port: 80, hostname: "foo.com" },
      { name: "bar", protocol: "HTTP", port: 80, hostname: "foo.com" },
    ),
    [L, "Combination of port, protocol and hostname must be unique for each listener"],
  ],
  [
    "combination of port and protocol are not unique for each listener when hostnames not set",
    listeners({ name: "foo", protocol: "HTTP", port: 80 }, { name: "bar", protocol: "HTTP", port: 80 }),
    [L, "Combination of port, protocol and hostname must be unique for each listener"],
  ],
  [
    "port is unique when protocol and hostname are the same",
    listeners(
      { name: "foo", protocol: "HTTP", port: 80, hostname: "foo.com" },
      { name: "bar", protocol: "HTTP", port: 8080, hostname: "foo.com" },
    ),
  ],
  [
    "hostname is unique when protocol and port are the same",
    listeners(
      { name: "foo", protocol: "HTTP", port: 80, hostname: "foo.com" },
      { name: "bar", protocol: "HTTP", port: 80, hostname: "bar.com" },
    ),
  ],
  [
    "one omitted hostname is unique when protocol and port are the same",
    listeners(
      { name: "foo", protocol: "HTTP", port: 80, hostname: "foo.com" },
      { name: "bar", protocol: "HTTP", port: 80 },
    ),
  ],
  [
    "protocol is unique when port and hostname are the same",
    listeners(
      { name: "foo", protocol: "HTTP", port: 80, hostname: "foo.com" },
      { name: "bar", protocol: "HTTPS", port: 80, hostname: "foo.com", tls: certs },
    ),
  ],
  [
    "ip address and hostname in addresses are valid",
    {
      addresses: [
        { type: "IPAddress", value: "1.2.3.4" },
        { type: "IPAddress", value: "1111:2222:3333:4444::" },
        { type: "Hostname", value: "foo.bar" },
      ],
    },
  ],
  [
    "an IP address with a port",
    { addresses: [{ type: "IPAddress", value: "1.2.3.4:8080" }] },
    ["spec.addresses[0]", "must be of type ipv4"],
  ],
  [
    "an IP address by default type",
    { addresses: [{ value: "not-an-ip" }] },
    ["spec.addresses[0]", "must be of type ipv4"],
  ],
  [
    "an invalid hostname address",
    { addresses: [{ type: "Hostname", value: "*foo/bar" }] },
    ["spec.addresses[0]", "Hostname value must be empty or contain only valid characters"],
  ],
  [
    "duplicate ip address or hostname",
    {
      addresses: [
        { type: "IPAddress", value: "1.2.3.4" },
        { type: "IPAddress", value: "1.2.3.4" },
        { type: "Hostname", value: "foo.bar" },
        { type: "Hostname", value: "foo.bar" },
      ],
    },
    ["spec.addresses", "IPAddress values must be unique", "Hostname values must be unique"],
  ],
  [
    "duplicate hostnames",
    {
      addresses: [
        { type: "Hostname", value: "foo.bar" },
        { type: "Hostname", value: "foo.bar" },
      ],
    },
    ["spec.addresses", "Hostname values must be unique"],
  ],
  [
    "optional ip address or hostname values",
    { addresses: [{ type: "IPAddress" }, { type: "Hostname" }, { type: "IPAddress" }, { type: "Hostname" }] },
  ],
  [
    "a named address of another implementation",
    { addresses: [{ type: "example.com/custom", value: "anything" }] },
  ],
  // Schema
  ["no listeners", { listeners: [] }, [L, "at least 1 items"]],
  ["no class", { gatewayClassName: undefined }, ["spec.gatewayClassName", "is required"]],
  ["a port of 0", listeners({ name: "a", protocol: "HTTP", port: 0 }), [`${L}[0].port`, "1-65535"]],
  [
    "an upper-case listener name",
    listeners({ name: "Http", protocol: "HTTP", port: 80 }),
    [`${L}[0].name`, "must match"],
  ],
  [
    "a hostname with a port",
    listeners({ name: "a", protocol: "HTTP", port: 80, hostname: "a.com:80" }),
    [`${L}[0].hostname`, "must match"],
  ],
  ["a domain-prefixed protocol", listeners({ name: "a", protocol: "example.com/Foo", port: 80 })],
  [
    "allowed routes from a selector",
    listeners({
      name: "a",
      protocol: "HTTP",
      port: 80,
      allowedRoutes: {
        namespaces: { from: "Selector", selector: { matchLabels: { shared: "true" } } },
        kinds: [{ kind: "HTTPRoute" }, { kind: "GRPCRoute" }],
      },
    }),
  ],
  [
    "allowed routes from an unknown source",
    listeners({ name: "a", protocol: "HTTP", port: 80, allowedRoutes: { namespaces: { from: "Mine" } } }),
    [`${L}[0].allowedRoutes.namespaces.from`, "unsupported value"],
  ],
  [
    "infrastructure labels",
    { infrastructure: { labels: { "example.com/team": "a" }, annotations: { note: "x" } } },
  ],
  [
    "an infrastructure label key with two slashes",
    { infrastructure: { labels: { "a/b/c": "x" } } },
    ["spec.infrastructure.labels", "Label keys must be in the form of an optional DNS subdomain prefix"],
  ],
  [
    "an infrastructure annotation key with a bad name",
    { infrastructure: { annotations: { "-x": "y" } } },
    ["spec.infrastructure.annotations", "Annotation keys must be in the form"],
  ],
  [
    "an infrastructure annotation key prefix of 253 characters",
    { infrastructure: { annotations: { [`${"a.".repeat(126)}b/x`]: "y" } } },
    [
      "spec.infrastructure.annotations",
      "If specified, the annotation key's prefix must be a DNS subdomain not longer than 253 characters in total.",
    ],
  ],
  [
    "an infrastructure label value with a space",
    { infrastructure: { labels: { team: "a b" } } },
    ["spec.infrastructure.labels.team", "must match"],
  ],
  [
    "nine infrastructure labels",
    { infrastructure: { labels: Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`l${i}`, "v"])) } },
    ["spec.infrastructure.labels", "at most 8 properties"],
  ],
  [
    "frontend TLS validation per port",
    {
      tls: {
        frontend: {
          default: {},
          perPort: [
            {
              port: 443,
              tls: { validation: { caCertificateRefs: [{ group: "", kind: "ConfigMap", name: "ca" }] } },
            },
          ],
        },
      },
    },
  ],
  [
    "frontend TLS validation repeating a port",
    { tls: { frontend: { default: {}, perPort: [443, 443].map((port) => ({ port, tls: {} })) } } },
    ["spec.tls.frontend.perPort", "Port for TLS configuration must be unique within the Gateway"],
  ],
  [
    "frontend TLS without its default",
    { tls: { frontend: {} } },
    ["spec.tls.frontend.default", "is required"],
  ],
];

describe("kubernetesGatewayCheck", () => {
  it("accepts a Gateway of Istio's class with an HTTP listener", () => expect(gateway({})).toBeUndefined());
  it("refuses a Gateway without a spec", () =>
    expect(kubernetesGatewayCheck(object("Gateway", undefined), "")).toEqual({
      field: "spec",
      message: "is required",
    }));
  it.each(gatewayCases)("%s", (_, spec, want) => {
    const got = gateway(spec);
    if (!want) return expect(got).toBeUndefined();
    const [field, ...messages] = want;
    expect(got?.field).toContain(field);
    expect(
      messages.some((m) => got?.message.includes(m)),
      got?.message,
    ).toBe(true);
  });
});

describe("gatewayClassCheck", () => {
  const check = (spec: Raw | undefined) => gatewayClassCheck(object("GatewayClass", spec), "");
  it.each([
    [
      "Istio's class",
      { controllerName: "istio.io/gateway-controller", description: "The default Istio GatewayClass" },
      undefined,
    ],
    [
      "with parameters",
      {
        controllerName: "example.net/gateway-controller",
        parametersRef: { group: "", kind: "ConfigMap", name: "p", namespace: "ns" },
      },
      undefined,
    ],
    ["no controller", {}, "spec.controllerName: is required"],
    [
      "a controller without a path",
      { controllerName: "istio.io" },
      'spec.controllerName: "istio.io" must match',
    ],
    [
      "a long description",
      { controllerName: "a.io/b", description: "x".repeat(65) },
      "spec.description: must be at most 64 characters",
    ],
    [
      "parameters without a kind",
      { controllerName: "a.io/b", parametersRef: { group: "", name: "p" } },
      "spec.parametersRef.kind: is required",
    ],
    ["no spec", undefined, "spec: is required"],
  ])("%s", (_, spec, want) => {
    const got = check(spec);
    expect(got && `${got.field}: ${got.message}`).toEqual(want && expect.stringContaining(want));
  });
});

describe("referenceGrantCheck", () => {
  const check = (spec: Raw | undefined) => referenceGrantCheck(object("ReferenceGrant", spec), "");
  const from = [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute", namespace: "front" }];
  const to = [{ group: "", kind: "Service" }];
  it.each([
    ["routes of a namespace to its Services", { from, to }, undefined],
    ["to one named Service", { from, to: [{ group: "", kind: "Service", name: "reviews" }] }, undefined],
    ["no spec (optional in the CRD)", undefined, undefined],
    ["no from", { to }, "spec.from: is required"],
    ["an empty from", { from: [], to }, "spec.from: must have at least 1 items"],
    [
      "17 targets",
      { from, to: Array.from({ length: 17 }, () => to[0]) },
      "spec.to: must have at most 16 items",
    ],
    [
      "a from without a namespace",
      { from: [{ group: "", kind: "HTTPRoute" }], to },
      "spec.from[0].namespace: is required",
    ],
    [
      "a from in a bad namespace",
      { from: [{ ...from[0], namespace: "Front" }], to },
      'spec.from[0].namespace: "Front" must match',
    ],
    ["a to without a group", { from, to: [{ kind: "Service" }] }, "spec.to[0].group: is required"],
  ])("%s", (_, spec, want) => {
    const got = check(spec as Raw | undefined);
    expect(got && `${got.field}: ${got.message}`).toEqual(want && expect.stringContaining(want));
  });
});
