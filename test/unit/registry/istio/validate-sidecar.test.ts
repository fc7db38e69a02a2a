import { describe, expect, it } from "vitest";
import { sidecarCheck } from "../../../../lib/registry/istio/validate-sidecar.ts";
import { sidecar } from "./builders.ts";

const check = (spec: Record<string, unknown>) => sidecarCheck(sidecar(spec), "object");

describe("sidecarCheck", () => {
  it.each([
    ["the builder", {}],
    ["every namespace form", { egress: [{ hosts: ["*/*", "./reviews", "~/*", "prod/*.example.com"] }] }],
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
      { egress: [{ hosts: ["Prod/*"] }] },
      "object.spec.egress[0].hosts[0]",
      "invalid namespace",
    ],
    [
      "a bad host",
      { egress: [{ hosts: ["./a..b"] }] },
      "object.spec.egress[0].hosts[0]",
      "must not be empty",
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
    [
      "a selector label",
      { workloadSelector: { labels: { app: "a*" } } },
      "object.spec.workloadSelector.labels.app",
      "label value",
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
