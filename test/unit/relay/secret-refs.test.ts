/**
 * lib/relay/secret-refs.ts: the relay reads only the Secrets a Gateway names: an Istio Gateway's
 * credentialName(s) in its namespace, a Gateway API Gateway's certificateRefs (another namespace
 * only through a ReferenceGrant there), each with its -cacert companion; told apart by apiVersion
 * group; one start per Secret when the first reference appears, one stop with the last; bounded.
 */
import { describe, expect, it } from "vitest";
import { createSecretRefs, namedSecrets } from "../../../lib/relay/secret-refs.ts";

const istioGateway = (ns: string, name: string, creds: string[], apiVersion = "networking.istio.io/v1") => ({
  apiVersion,
  kind: "Gateway",
  metadata: { namespace: ns, name },
  spec: {
    selector: { istio: "ingressgateway" },
    servers: creds.map((c, i) => ({
      port: { number: 443 + i, name: `https-${i}`, protocol: "HTTPS" },
      hosts: ["*"],
      tls: { mode: "SIMPLE", credentialName: c },
    })),
  },
});
const apiGateway = (ns: string, name: string, refs: object[]) => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "Gateway",
  metadata: { namespace: ns, name },
  spec: {
    gatewayClassName: "istio",
    listeners: [
      { name: "https", port: 443, protocol: "HTTPS", tls: { mode: "Terminate", certificateRefs: refs } },
    ],
  },
});
const grant = (ns: string, from: string, to?: string) => ({
  apiVersion: "gateway.networking.k8s.io/v1beta1",
  kind: "ReferenceGrant",
  metadata: { namespace: ns, name: `allow-${from}` },
  spec: {
    from: [{ group: "gateway.networking.k8s.io", kind: "Gateway", namespace: from }],
    to: [{ group: "", kind: "Secret", ...(to && { name: to }) }],
  },
});
const names = (refs: { namespace: string; name: string }[]) => refs.map((r) => `${r.namespace}/${r.name}`);

describe("the Secrets a Gateway names", () => {
  it("Istio: credentialName and credentialNames, kubernetes:// stripped, in the Gateway's namespace", () => {
    const g = istioGateway("ingress", "gw", ["cert", "kubernetes://other"]);
    (g.spec.servers[0] as { tls: Record<string, unknown> }).tls.credentialNames = ["rsa", "ecdsa"];
    expect(names(namedSecrets(g))).toEqual(["ingress/cert", "ingress/rsa", "ingress/ecdsa", "ingress/other"]);
  });

  it("Gateway API: certificateRefs of kind Secret (the default), another namespace marked for a grant", () => {
    const g = apiGateway("ingress", "gw", [
      { name: "cert" },
      { name: "shared", namespace: "certs" },
      { kind: "ConfigMap", name: "not-a-secret" },
      { group: "example.com", kind: "Secret", name: "other-group" },
    ]);
    expect(namedSecrets(g)).toEqual([
      { namespace: "ingress", name: "cert" },
      { namespace: "certs", name: "shared", grantFrom: "ingress" },
    ]);
  });

  it("told apart by apiVersion group: another group's Gateway names nothing", () => {
    expect(namedSecrets({ ...istioGateway("a", "g", ["c"]), apiVersion: "example.com/v1" })).toEqual([]);
  });
});

describe("the watches the relay runs", () => {
  it("one per Secret (and its -cacert) while a Gateway names it; stopped with the last reference", () => {
    const refs = createSecretRefs({ maxWatched: 100 });
    const a = refs.event({ type: "ADDED", object: istioGateway("ingress", "a", ["cert"]) });
    expect({ start: names(a.start), stop: a.stop }).toEqual({
      start: ["ingress/cert", "ingress/cert-cacert"],
      stop: [],
    });
    const b = refs.event({
      type: "ADDED",
      object: istioGateway("ingress", "b", ["cert"], "networking.istio.io/v1beta1"),
    });
    expect(b).toEqual({ start: [], stop: [], log: [] });
    expect(refs.event({ type: "DELETED", object: istioGateway("ingress", "a", ["cert"]) })).toEqual({
      start: [],
      stop: [],
      log: [],
    });
    const gone = refs.event({
      type: "MODIFIED",
      object: istioGateway("ingress", "b", ["new"], "networking.istio.io/v1beta1"),
    });
    expect({ start: names(gone.start), stop: names(gone.stop) }).toEqual({
      start: ["ingress/new", "ingress/new-cacert"],
      stop: ["ingress/cert", "ingress/cert-cacert"],
    });
  });

  it("another namespace's Secret only while a ReferenceGrant there allows Gateways of this one", () => {
    const refs = createSecretRefs({ maxWatched: 100 });
    expect(
      refs.event({
        type: "ADDED",
        object: apiGateway("ingress", "gw", [{ name: "shared", namespace: "certs" }]),
      }).start,
    ).toEqual([]);
    expect(refs.event({ type: "ADDED", object: grant("certs", "other-ns") }).start).toEqual([]);
    expect(refs.event({ type: "ADDED", object: grant("certs", "ingress", "someone-else") }).start).toEqual(
      [],
    );
    expect(
      names(refs.event({ type: "MODIFIED", object: grant("certs", "ingress", "shared") }).start),
    ).toEqual(["certs/shared", "certs/shared-cacert"]);
    expect(names(refs.event({ type: "DELETED", object: grant("certs", "ingress") }).stop)).toEqual([
      "certs/shared",
      "certs/shared-cacert",
    ]);
  });

  it("a relist replaces what one source said (its items carry no kind), and leaves the others", () => {
    const refs = createSecretRefs({ maxWatched: 100 });
    refs.event({ type: "ADDED", object: istioGateway("ingress", "a", ["one"]) });
    refs.event({ type: "ADDED", object: apiGateway("ingress", "gw", [{ name: "api" }]) });
    const { apiVersion: _v, kind: _k, ...item } = istioGateway("ingress", "b", ["two"]);
    const r = refs.resync([item], "istio-gateway");
    expect({ start: names(r.start), stop: names(r.stop) }).toEqual({
      start: ["ingress/two", "ingress/two-cacert"],
      stop: ["ingress/one", "ingress/one-cacert"],
    });
    expect(names(refs.watched()).sort()).toEqual([
      "ingress/api",
      "ingress/api-cacert",
      "ingress/two",
      "ingress/two-cacert",
    ]);
  });

  it("bounded: past maxWatched the rest wait, with one line when the count over it changes", () => {
    const refs = createSecretRefs({ maxWatched: 3 });
    const r = refs.event({ type: "ADDED", object: istioGateway("ingress", "a", ["a", "b"]) });
    expect(names(r.start)).toEqual(["ingress/a", "ingress/a-cacert", "ingress/b"]);
    expect(r.log).toEqual([
      "secrets: 4 referenced, 1 not watched: the limit of 3 watched Secrets is reached",
    ]);
    expect(refs.overLimit()).toBe(1);
    expect(refs.event({ type: "MODIFIED", object: istioGateway("ingress", "a", ["a", "b"]) }).log).toEqual(
      [],
    );
    const freed = refs.event({ type: "MODIFIED", object: istioGateway("ingress", "a", ["b"]) });
    expect({ start: names(freed.start), stop: names(freed.stop), over: refs.overLimit() }).toEqual({
      start: ["ingress/b-cacert"],
      stop: ["ingress/a", "ingress/a-cacert"],
      over: 0,
    });
  });
});
