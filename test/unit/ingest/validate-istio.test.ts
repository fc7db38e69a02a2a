/**
 * Istio networking kinds through whole-batch validation: a spec istiod's webhook rejects fails the
 * batch at its event index and field path (the Istio Gateway too); a valid one passes in every
 * served apiVersion.
 */
import { describe, expect, it } from "vitest";
import { validateEvents } from "../../../lib/ingest/index.ts";
import { destinationRule, virtualService, workloadEntry } from "./support/istio.ts";

const ev = (object: unknown, type = "ADDED") => ({ type, object });
const istioGateway = (servers: unknown[]) => ({
  apiVersion: "networking.istio.io/v1",
  kind: "Gateway",
  metadata: { name: "ingress", namespace: "istio-system" },
  spec: { selector: { istio: "ingressgateway" }, servers },
});

describe("validateEvents: Istio kinds", () => {
  const bad: { name: string; object: unknown; field: string; message: RegExp }[] = [
    {
      name: "a negative weight",
      object: virtualService("reviews", {
        http: [
          {
            route: [
              { destination: { host: "reviews", subset: "v1" }, weight: -10 },
              { destination: { host: "reviews", subset: "v2" }, weight: 110 },
            ],
          },
        ],
      }),
      field: "object.spec.http[0].route[0].weight",
      message: /./,
    },
    {
      name: "a regex that does not compile",
      object: virtualService("reviews", {
        http: [{ match: [{ uri: { regex: "(unclosed" } }], route: [{ destination: { host: "reviews" } }] }],
      }),
      field: "object.spec.http[0].match[0].uri.regex",
      message: /./,
    },
    {
      name: "a duplicate subset name",
      object: destinationRule("reviews", [
        { name: "v1", labels: { version: "v1" } },
        { name: "v1", labels: { version: "v2" } },
      ]),
      field: "object.spec.subsets[1].name",
      message: /duplicate/i,
    },
    {
      name: "a subset name that is not a DNS label",
      object: destinationRule("reviews", [{ name: "V_1", labels: { version: "v1" } }]),
      field: "object.spec.subsets[0].name",
      message: /./,
    },
    {
      name: "an Istio Gateway with an HTTPS server and no TLS",
      object: istioGateway([
        { port: { number: 443, name: "https", protocol: "HTTPS" }, hosts: ["a.example.com"] },
      ]),
      field: "object.spec.servers[0].tls",
      message: /server must have TLS settings for HTTPS\/TLS protocols/,
    },
    {
      name: "an Istio Gateway host with a bad namespace",
      object: istioGateway([
        { port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["fr_ont/a.example.com"] },
      ]),
      field: "object.spec.servers[0].hosts[0]",
      message: /invalid namespace value "fr_ont" in gateway/,
    },
    {
      name: "a WorkloadEntry without an address or network",
      object: workloadEntry("we-1", { labels: { app: "x" } }),
      field: "object.spec",
      message: /./,
    },
  ];
  it.each(bad)("$name: the batch fails at the event and field", ({ object, field, message }) => {
    const fine = virtualService("fine", { http: [{ route: [{ destination: { host: "fine" } }] }] });
    const r = validateEvents([ev(fine), ev(object)]);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.index).toBe(1);
    expect(r.error.field?.startsWith(field)).toBe(true);
    expect(r.error.message).toMatch(message);
  });

  it.each([
    "networking.istio.io/v1",
    "networking.istio.io/v1beta1",
    "networking.istio.io/v1alpha3",
  ])("accepts %s for every kind, WorkloadEntry included", (apiVersion) => {
    const objects = [
      virtualService("reviews", { http: [{ route: [{ destination: { host: "reviews" } }] }] }),
      destinationRule("reviews", [{ name: "v1", labels: { version: "v1" } }]),
      workloadEntry("we-1", { address: "10.0.0.9", labels: { app: "x" } }),
      istioGateway([{ port: { number: 80, name: "http", protocol: "HTTP" }, hosts: ["front/*"] }]),
    ].map((o) => ({ ...o, apiVersion }));
    expect(validateEvents(objects.map((o) => ev(o)))).toMatchObject({ ok: true });
  });
});
