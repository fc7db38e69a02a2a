/**
 * Gateway credentials over real gRPC ADS (@grpc/grpc-js, SotW and Delta) with XDS_AUTH=jwt on the
 * Node runtime: a router~ proxy of namespace `ingress` with an `ingress` token gets
 * `kubernetes://cert` with the Secret's chain and key, PGV-checked; a gateway of another namespace
 * asking for it (either name form) gets nothing and the refusal is logged; a sidecar of `ingress`
 * gets nothing; a rotation (the Secret updated) reaches the holder and wakes no one else.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SecretSchema } from "../../../lib/gen/envoy/extensions/transport_sockets/tls/v3/secret_pb.ts";
import {
  DeltaDiscoveryRequestSchema,
  type DeltaDiscoveryResponse,
  DiscoveryRequestSchema,
  type DiscoveryResponse,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { decodeChecked } from "../../support/xds-check.ts";
import { claims, jwksOf, makeKeys, sign, type TestKeys } from "../../unit/auth/tokens.ts";
import { secretObject, servingPair } from "../../unit/registry/kube/secret-builders.ts";
import { post } from "../support/converge.ts";
import { type RunningControlPlane, startControlPlane } from "../support/runtime.ts";

const SDS = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret";
const ads = "/envoy.service.discovery.v3.AggregatedDiscoveryService/";
let cp: RunningControlPlane;
let keys: TestKeys;
const first = await servingPair("bookinfo.example.com", Date.now() - 86_400_000);
const rotated = await servingPair("bookinfo.example.com", Date.now() - 86_400_000);
/** What the Secret holds now (each test rotates it to the other pair). */
let current = first;
let resourceVersion = 1;

/** A token for `<ns>/<sa>` valid now (the child process has the real clock). */
const mint = (ns: string, sa: string) => {
  const t = Math.floor(Date.now() / 1000);
  return sign(
    keys,
    "RS256",
    claims({
      iat: t,
      nbf: t - 5,
      exp: t + 600,
      sub: `system:serviceaccount:${ns}:${sa}`,
      "kubernetes.io": { namespace: ns, serviceaccount: { name: sa, uid: `u-${ns}` } },
    }),
  );
};
const routerIn = (ns: string) => ({ id: `router~10.0.0.1~gw-1.${ns}~${ns}.svc.cluster.local` });

type Answer = { names: string[]; secrets: { name: string; chain: string; key: string }[] };
function secretsOf(resources: { name: string; value: Uint8Array }[]): Answer["secrets"] {
  return resources.map((r) => {
    const s = fromBinary(SecretSchema, r.value);
    const text = (v: unknown) => new TextDecoder().decode(v as Uint8Array);
    return s.type.case === "tlsCertificate"
      ? {
          name: s.name,
          chain: text(s.type.value.certificateChain?.specifier.value),
          key: text(s.type.value.privateKey?.specifier.value),
        }
      : { name: s.name, chain: "", key: "" };
  });
}

/** A gRPC ADS stream with a bearer token: requests written, answers collected (SotW or Delta). */
function stream(token: string, delta: boolean) {
  const client = new grpc.Client(`127.0.0.1:${cp.xdsPort}`, grpc.credentials.createInsecure());
  const md = new grpc.Metadata();
  md.set("authorization", `Bearer ${token}`);
  const call = delta
    ? client.makeBidiStreamRequest(
        `${ads}DeltaAggregatedResources`,
        (m: object) =>
          Buffer.from(toBinary(DeltaDiscoveryRequestSchema, create(DeltaDiscoveryRequestSchema, m))),
        decodeChecked.delta,
        md,
      )
    : client.makeBidiStreamRequest(
        `${ads}StreamAggregatedResources`,
        (m: object) => Buffer.from(toBinary(DiscoveryRequestSchema, create(DiscoveryRequestSchema, m))),
        decodeChecked.sotw,
        md,
      );
  const answers: Answer[] = [];
  let error = "";
  call.on("data", (r: DiscoveryResponse | DeltaDiscoveryResponse) => {
    const items =
      "versionInfo" in r
        ? r.resources.map((a) => ({ name: "", value: a.value }))
        : r.resources.map((x) => ({ name: x.name, value: x.resource?.value ?? new Uint8Array() }));
    const secrets = secretsOf(items);
    answers.push({ names: secrets.map((s) => s.name), secrets });
    // ACK, as Envoy does.
    if ("versionInfo" in r)
      call.write({ typeUrl: SDS, versionInfo: r.versionInfo, responseNonce: r.nonce, resourceNames: names });
    else call.write({ typeUrl: SDS, responseNonce: r.nonce });
  });
  call.on("error", (e: grpc.ServiceError) => {
    error = `${e.code} ${e.details}`;
  });
  let names: string[] = [];
  return {
    answers,
    error: () => error,
    subscribe(node: object, wanted: string[]) {
      names = wanted;
      call.write(
        delta
          ? { node, typeUrl: SDS, resourceNamesSubscribe: wanted }
          : { node, typeUrl: SDS, resourceNames: wanted },
      );
    },
    close() {
      call.cancel();
      client.close();
    },
  };
}

/** Waits until `cond` holds (polling every 20 ms, at most `ms`). */
async function until(cond: () => boolean, ms = 5000) {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out\n${cp.output()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
const settle = () => new Promise((r) => setTimeout(r, 600));

beforeAll(async () => {
  keys = await makeKeys();
  const { keys: both } = JSON.parse(await jwksOf(keys)) as { keys: object[] };
  const dir = mkdtempSync(join(tmpdir(), "edgepilot-sds-"));
  writeFileSync(join(dir, "jwks.json"), JSON.stringify({ keys: [both[0]] }));
  cp = await startControlPlane({
    XDS_AUTH: "jwt",
    XDS_JWT_ISSUER: claims().iss as string,
    XDS_JWT_AUDIENCE: "edgepilot",
    XDS_JWKS_FILE: join(dir, "jwks.json"),
  });
  await post(cp, {
    type: "ADDED",
    object: secretObject(
      "cert",
      "ingress",
      { "tls.crt": first.cert, "tls.key": first.key },
      "kubernetes.io/tls",
      "1",
    ),
  });
});
afterAll(async () => {
  await cp?.stop();
});

describe("gateway secrets over ADS with XDS_AUTH=jwt", () => {
  for (const delta of [false, true])
    it(`${delta ? "Delta" : "SotW"}: the ingress gateway gets kubernetes://cert; another namespace's gateway and a sidecar get nothing; a rotation reaches the holder only`, async () => {
      const holder = stream(await mint("ingress", "ingressgateway"), delta);
      const stranger = stream(await mint("shop", "shopgateway"), delta);
      const sidecar = stream(await mint("ingress", "app"), delta);
      try {
        holder.subscribe(routerIn("ingress"), ["kubernetes://cert"]);
        await until(() => holder.answers.some((a) => a.names.length > 0));
        const got = holder.answers.find((a) => a.names.length > 0)?.secrets;
        expect(got).toEqual([{ name: "kubernetes://cert", chain: current.cert, key: current.key }]);

        stranger.subscribe(routerIn("shop"), ["kubernetes://cert", "kubernetes-gateway://ingress/cert"]);
        sidecar.subscribe({ id: "sidecar~10.0.0.2~app-1.ingress~ingress.svc.cluster.local" }, [
          "kubernetes://cert",
        ]);
        await settle();
        expect(stranger.answers.flatMap((a) => a.names)).toEqual([]);
        expect(sidecar.answers.flatMap((a) => a.names)).toEqual([]);
        expect(stranger.error() + sidecar.error() + holder.error()).toBe("");
        expect(cp.output()).toContain(
          `sds: proxy "router~10.0.0.1~gw-1.shop~shop.svc.cluster.local" of namespace "shop" refused "kubernetes-gateway://ingress/cert"`,
        );

        const before = { stranger: stranger.answers.length, sidecar: sidecar.answers.length };
        const pair = current === first ? rotated : first;
        current = pair;
        resourceVersion++;
        await post(cp, {
          type: "MODIFIED",
          object: secretObject(
            "cert",
            "ingress",
            { "tls.crt": pair.cert, "tls.key": pair.key },
            "kubernetes.io/tls",
            String(resourceVersion),
          ),
        });
        await until(() => holder.answers.filter((a) => a.names.length > 0).length >= 2);
        expect(holder.answers.filter((a) => a.names.length > 0).at(-1)?.secrets).toEqual([
          { name: "kubernetes://cert", chain: pair.cert, key: pair.key },
        ]);
        await settle();
        expect(stranger.answers.slice(before.stranger).flatMap((a) => a.names)).toEqual([]);
        expect(sidecar.answers.slice(before.sidecar).flatMap((a) => a.names)).toEqual([]);
        // The key never reaches a log line.
        expect(cp.output()).not.toContain(pair.key.split("\n")[1] as string);
      } finally {
        holder.close();
        stranger.close();
        sidecar.close();
      }
    });
});
