import { describe, expect, it } from "vitest";
import { sidecarCheck } from "../../../../lib/registry/istio/validate-sidecar.ts";
import { sidecar } from "./builders.ts";

const check = (spec: Record<string, unknown>) => sidecarCheck(sidecar(spec), "object");

describe("sidecarCheck", () => {
  it.each([
    ["the builder", {}],
    [
      "every namespace form",
      { egress: [{ hosts: ["*/*", "./reviews.default.svc.cluster.local", "~/*", "Prod/*.example.com"] }] },
    ],
    [
      "a port listener before the catch-all",
      {
        egress: [
          { port: { number: 9080, protocol: "HTTP", name: "http" }, hosts: ["./*"] },
          { hosts: ["*/*"] },
        ],
      },
    ],
    ["outbound policy only", { egress: undefined, outboundTrafficPolicy: { mode: "ALLOW_ANY" } }],
    ...[
      "127.0.0.1:8080",
      "0.0.0.0:8080",
      "[::1]:8080",
      "[::]:8080",
      ":8080",
      "unix:///var/run/app.sock",
      "unix://@abstract",
    ].map((e): [string, Record<string, unknown>] => [
      `an ingress listener to ${e}`,
      {
        ingress: [
          {
            port: { number: 9080, protocol: "HTTP", name: "http" },
            defaultEndpoint: e,
            bind: "10.0.0.1",
            captureMode: "IPTABLES",
          },
        ],
      },
    ]),
    ["an ingress listener without defaultEndpoint", { ingress: [{ port: { number: 9080 } }] }],
  ])("accepts %s", (_, spec) => expect(check(spec)).toBeUndefined());

  it.each([
    ["an empty configuration", { egress: [] }, "object.spec", "empty configuration"],
    [
      "a host without namespace",
      { egress: [{ hosts: ["reviews"] }] },
      "object.spec.egress[0].hosts[0]",
      "namespace/dnsName",
    ],
    [
      "a bad namespace",
      { egress: [{ hosts: ["Pr_od/*"] }] },
      "object.spec.egress[0].hosts[0]",
      "invalid namespace",
    ],
    ["a bad host", { egress: [{ hosts: ["./a..b"] }] }, "object.spec.egress[0].hosts[0]", 'label "" invalid'],
    [
      "a short name (istiod wants an FQDN)",
      { egress: [{ hosts: ["./reviews"] }] },
      "object.spec.egress[0].hosts[0]",
      "short names (non FQDN) are not allowed",
    ],
    [
      "an empty host part",
      { egress: [{ hosts: ["ns/"] }] },
      "object.spec.egress[0].hosts[0]",
      "cannot be empty",
    ],
    ["no hosts", { egress: [{ port: { number: 80 } }] }, "object.spec.egress[0].hosts", "at least one host"],
    [
      "a catch-all before the last",
      { egress: [{ hosts: ["./*"] }, { port: { number: 80 }, hosts: ["./*"] }] },
      "object.spec.egress[0]",
      "should be the last",
    ],
    [
      "duplicate ports",
      {
        egress: [
          { port: { number: 80 }, hosts: ["./*"] },
          { port: { number: 80 }, hosts: ["./*"] },
        ],
      },
      "object.spec.egress[1].port.number",
      "unique",
    ],
    [
      "an ingress without port",
      { ingress: [{ defaultEndpoint: "127.0.0.1:80" }] },
      "object.spec.ingress[0].port",
      "port is required",
    ],
    ...(
      [
        ["port number 0", { port: { number: 0 } }, "port.number", "port number"],
        ["port number 70000", { port: { number: 70000 } }, "port.number", "port number"],
        ["a bad port name", { port: { number: 80, name: "Http_1" } }, "port.name", "invalid port name"],
        [
          "an unknown protocol",
          { port: { number: 80, protocol: "QUIC" } },
          "port.protocol",
          "unsupported protocol",
        ],
        ["a bind that is no IP", { port: { number: 80 }, bind: "localhost" }, "bind", "not a valid IP"],
        [
          "an unknown captureMode",
          { port: { number: 80 }, captureMode: "TPROXY" },
          "captureMode",
          "want one of",
        ],
        [
          "a defaultEndpoint on another host",
          { port: { number: 80 }, defaultEndpoint: "10.0.0.1:80" },
          "defaultEndpoint",
          "must be of form",
        ],
        [
          "a defaultEndpoint without port",
          { port: { number: 80 }, defaultEndpoint: "127.0.0.1" },
          "defaultEndpoint",
          "missing port in address",
        ],
        [
          "a defaultEndpoint port that is no number",
          { port: { number: 80 }, defaultEndpoint: "127.0.0.1:http" },
          "defaultEndpoint",
          "is not a number",
        ],
        [
          "a defaultEndpoint port out of range",
          { port: { number: 80 }, defaultEndpoint: "127.0.0.1:0" },
          "defaultEndpoint",
          "1..65535",
        ],
        [
          "a relative unix path",
          { port: { number: 80 }, defaultEndpoint: "unix://run/app.sock" },
          "defaultEndpoint",
          "absolute path",
        ],
        [
          "an empty unix path",
          { port: { number: 80 }, defaultEndpoint: "unix://" },
          "defaultEndpoint",
          "must not be empty",
        ],
      ] as [string, Record<string, unknown>, string, string][]
    ).map(([what, listener, field, why]): [string, Record<string, unknown>, string, string] => [
      `an ingress listener with ${what}`,
      { ingress: [listener] },
      `object.spec.ingress[0].${field}`,
      why,
    ]),
    [
      "duplicate ingress ports",
      { ingress: [{ port: { number: 80 } }, { port: { number: 80 } }] },
      "object.spec.ingress[1].port.number",
      "unique",
    ],
    [
      "a selector label",
      { workloadSelector: { labels: { app: "a*" } } },
      "object.spec.workloadSelector.labels.app",
      "wildcard is not supported in selector",
    ],
    [
      "egressProxy with REGISTRY_ONLY",
      { outboundTrafficPolicy: { mode: "REGISTRY_ONLY", egressProxy: { host: "a" } } },
      "object.spec.outboundTrafficPolicy.egressProxy",
      "ALLOW_ANY",
    ],
  ])("refuses %s", (_, spec, field, why) =>
    expect(check(spec)).toEqual({ field, message: expect.stringContaining(why) }));
});
