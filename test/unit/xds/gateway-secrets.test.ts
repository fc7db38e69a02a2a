/**
 * Gateway credentials over SDS (lib/xds/gateway-secrets.ts) against istiod's sds.go: which nodes
 * are bound (router~ only, not GENERATOR=grpc), how names read, who may read which Secret (same
 * namespace; another only for kubernetes-gateway:// with a ReferenceGrant), the Envoy Secret built
 * (certificate chain and key, or the CA for -cacert), refusals logged escaped, and which pushed
 * changes a gateway stream takes.
 */
import { create, fromBinary } from "@bufbuild/protobuf";
import { beforeEach, describe, expect, it } from "vitest";
import { NodeSchema } from "../../../lib/gen/envoy/config/core/v3/base_pb.ts";
import { SecretSchema } from "../../../lib/gen/envoy/extensions/transport_sockets/tls/v3/secret_pb.ts";
import type { SecretMaterial } from "../../../lib/registry/kube/secret.ts";
import { type StoredSecret, secretChangeView } from "../../../lib/registry/kube/secret-store.ts";
import { secretChanges } from "../../../lib/resources/secret-changes.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys, type Store } from "../../../lib/store/index.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import {
  bindGatewaySecrets,
  type GatewaySecretsBinding,
  grantAllows,
  parseSdsName,
  readGatewaySecrets,
  takesSecretChange,
} from "../../../lib/xds/gateway-secrets.ts";
import { createStoreSource } from "../../../lib/xds/source.ts";
import { createViews } from "../../../lib/xds/view-source.ts";
import { b64 } from "../registry/kube/secret-builders.ts";

const node = (id: string, metadata: Record<string, string> = {}) => create(NodeSchema, { id, metadata });
const router = "router~10.0.0.1~ingressgateway-abc.ingress~ingress.svc.cluster.local";
const gateway: GatewaySecretsBinding = { nodeId: router, namespace: "ingress" };
const material = (cert: string, key?: string, ca?: string): SecretMaterial => ({
  ...(key !== undefined && {
    certKey: { cert: b64(cert), key: b64(key), from: ["tls.crt", "tls.key"] as const },
  }),
  ...(ca !== undefined && { ca: { cert: b64(ca), from: "ca.crt" } }),
});

let store: Store;
let lines: string[];
async function put(ns: string, name: string, m: SecretMaterial, cluster = "east") {
  const s: StoredSecret = {
    cluster,
    namespace: ns,
    name,
    resourceVersion: "1",
    material: m,
    hash: `h-${name}`,
  };
  await store.put(keys.secret(cluster, ns, name), s);
}
async function read(binding: GatewaySecretsBinding, ...names: string[]) {
  const found = await readGatewaySecrets(store, binding, names, (l) => lines.push(l));
  return found.map((r) => {
    const s = fromBinary(SecretSchema, r.body);
    expect(r.name).toBe(s.name);
    return { name: r.name, type: s.type.case };
  });
}

beforeEach(async () => {
  store = createMemoryStore();
  lines = [];
  await put("ingress", "cert", material("CHAIN", "KEY", "CA"));
  await put("ingress", "plain", material("CHAIN2", "KEY2"));
  await put("ingress", "plain-cacert", material("", undefined, "CA2"));
  await put("shop", "shop-cert", material("SHOPCHAIN", "SHOPKEY"));
});

describe("which nodes are gateways", () => {
  it("router~ with a namespace and no GENERATOR=grpc; never a sidecar or proxyless node", () => {
    expect(bindGatewaySecrets(node(router), "ingress")).toEqual({ nodeId: router, namespace: "ingress" });
    expect(bindGatewaySecrets(node(router, { CLUSTER_ID: "east" }), "ingress")).toMatchObject({
      cluster: "east",
    });
    expect(bindGatewaySecrets(node(router, { GENERATOR: "grpc" }), "ingress")).toBeUndefined();
    expect(
      bindGatewaySecrets(node("sidecar~10.0.0.2~app.ingress~ingress.svc.cluster.local"), "ingress"),
    ).toBeUndefined();
    expect(bindGatewaySecrets(node(router), "")).toBeUndefined();
  });
});

describe("SDS names (istiod's ParseResourceName)", () => {
  const table: [string, ReturnType<typeof parseSdsName>][] = [
    ["kubernetes://cert", { type: "kubernetes", namespace: "ingress", name: "cert" }],
    ["kubernetes://cert-cacert", { type: "kubernetes", namespace: "ingress", name: "cert-cacert" }],
    [
      "kubernetes-gateway://shop/shop-cert",
      { type: "kubernetes-gateway", namespace: "shop", name: "shop-cert" },
    ],
    ["kubernetes://shop/cert", undefined],
    ["kubernetes-gateway://shop", undefined],
    ["default", undefined],
    ["ROOTCA", undefined],
  ];
  for (const [name, want] of table) it(name, () => expect(parseSdsName(name, "ingress")).toEqual(want));
});

describe("who may read which Secret", () => {
  it("a gateway of the Secret's namespace gets the chain and key, and the CA for -cacert", async () => {
    expect(
      await read(
        gateway,
        "kubernetes://cert",
        "kubernetes://cert-cacert",
        "kubernetes-gateway://ingress/cert",
      ),
    ).toEqual([
      { name: "kubernetes-gateway://ingress/cert", type: "tlsCertificate" },
      { name: "kubernetes://cert", type: "tlsCertificate" },
      { name: "kubernetes://cert-cacert", type: "validationContext" },
    ]);
    const [r] = await readGatewaySecrets(store, gateway, ["kubernetes://cert"], () => {});
    const s = fromBinary(SecretSchema, (r as { body: Uint8Array }).body);
    expect(
      s.type.case === "tlsCertificate" &&
        new TextDecoder().decode(s.type.value.privateKey?.specifier.value as Uint8Array),
    ).toBe("KEY");
    expect(lines).toEqual([]);
  });

  it("-cacert reads the Secret <name>-cacert when it holds a CA, else <name>'s CA; a Secret without a CA serves none", async () => {
    const [own] = await readGatewaySecrets(store, gateway, ["kubernetes://plain-cacert"], () => {});
    const s = fromBinary(SecretSchema, (own as { body: Uint8Array }).body);
    expect(
      s.type.case === "validationContext" &&
        new TextDecoder().decode(s.type.value.trustedCa?.specifier.value as Uint8Array),
    ).toBe("CA2");
    await store.delete(keys.secret("east", "ingress", "plain-cacert"));
    expect(await read(gateway, "kubernetes://plain-cacert")).toEqual([]);
  });

  it("a gateway of another namespace: kubernetes:// names its own namespace; kubernetes-gateway:// is refused and logged", async () => {
    const shop: GatewaySecretsBinding = {
      nodeId: "router~1~gw.shop~shop.svc.cluster.local",
      namespace: "shop",
    };
    expect(await read(shop, "kubernetes://cert")).toEqual([]);
    expect(await read(shop, "kubernetes-gateway://ingress/cert")).toEqual([]);
    expect(lines).toEqual([
      `sds: proxy "router~1~gw.shop~shop.svc.cluster.local" of namespace "shop" refused "kubernetes-gateway://ingress/cert": a gateway reads its own namespace's secrets, or another's through a ReferenceGrant`,
    ]);
  });

  it("a ReferenceGrant in the Secret's namespace lets Gateways of the proxy's namespace read it", async () => {
    const grant = {
      from: [{ group: "gateway.networking.k8s.io", kind: "Gateway", namespace: "ingress" }],
      to: [{ group: "", kind: "Secret", name: "shop-cert" }],
    };
    await store.put(keys.config("ReferenceGrant", "shop", "allow", "east"), {
      kind: "ReferenceGrant",
      spec: grant,
    });
    expect(await read(gateway, "kubernetes-gateway://shop/shop-cert")).toEqual([
      { name: "kubernetes-gateway://shop/shop-cert", type: "tlsCertificate" },
    ]);
    expect(await read(gateway, "kubernetes://shop-cert")).toEqual([]);
    expect(lines).toEqual([]);
  });

  it("grants: from Gateways of that namespace only, to that Secret (or every Secret when unnamed)", () => {
    const g = (from: object, to: object) => [{ from: [from], to: [to] }];
    const gw = { group: "gateway.networking.k8s.io", kind: "Gateway", namespace: "ingress" };
    expect(grantAllows(g(gw, { group: "", kind: "Secret" }), "ingress", "x")).toBe(true);
    expect(grantAllows(g(gw, { group: "", kind: "Secret", name: "y" }), "ingress", "x")).toBe(false);
    expect(grantAllows(g({ ...gw, namespace: "other" }, { group: "", kind: "Secret" }), "ingress", "x")).toBe(
      false,
    );
    expect(grantAllows(g({ ...gw, kind: "HTTPRoute" }, { group: "", kind: "Secret" }), "ingress", "x")).toBe(
      false,
    );
    expect(grantAllows(g(gw, { group: "", kind: "Service" }), "ingress", "x")).toBe(false);
  });

  it("a refusal log escapes what the proxy sent", async () => {
    await read({ nodeId: "router~x\nforged", namespace: "a\tb" }, "kubernetes-gateway://ingress/cert\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toMatch(/[\n\t]/);
  });
});

describe("through the views: only a gateway's stream reads Secrets", () => {
  const source = () => createStoreSource(store);
  it("router~ gets them; a sidecar and a proxyless node asking the same names get nothing", async () => {
    const views = createViews({ store, cache: false, log: (l) => lines.push(l) });
    const through = async (n: ReturnType<typeof node>) =>
      (await views.source(await views.forNode(n), source()).get(TypeUrl.secret, ["kubernetes://cert"])).map(
        (r) => r.name,
      );
    expect(await through(node(router))).toEqual(["kubernetes://cert"]);
    expect(await through(node("sidecar~10.0.0.2~app-1.ingress~ingress.svc.cluster.local"))).toEqual([]);
    expect(await through(node(router, { GENERATOR: "grpc" }))).toEqual([]);
    expect(await through(node("router~10.0.0.1~gw.shop~shop.svc.cluster.local"))).toEqual([]);
  });
});

describe("what a push of a Secret changes", () => {
  it("its SDS names, marked with its namespace; a gateway takes its own namespace's and any kubernetes-gateway:// one", async () => {
    const changes = await secretChanges(store, ["Secret/ingress/cert", "ServiceEntry/default/a"]);
    expect(changes.map((c) => [c.name, c.version, c.view])).toEqual([
      ["kubernetes://cert", "h-cert", secretChangeView("ingress")],
      ["kubernetes-gateway://ingress/cert", "h-cert", secretChangeView("ingress")],
      ["kubernetes://cert-cacert", "h-cert", secretChangeView("ingress")],
      ["kubernetes-gateway://ingress/cert-cacert", "h-cert", secretChangeView("ingress")],
    ]);
    const shop: GatewaySecretsBinding = {
      nodeId: "router~1~gw.shop~shop.svc.cluster.local",
      namespace: "shop",
    };
    expect(changes.filter((c) => takesSecretChange(gateway, c))).toHaveLength(4);
    expect(changes.filter((c) => takesSecretChange(shop, c)).map((c) => c.name)).toEqual([
      "kubernetes-gateway://ingress/cert",
      "kubernetes-gateway://ingress/cert-cacert",
    ]);
    expect(takesSecretChange(gateway, { name: "outbound|80||a", view: undefined })).toBe(false);
    const gone = await secretChanges(store, ["Secret/ingress/nothing"]);
    expect(gone.every((c) => c.version === null)).toBe(true);
  });
});
