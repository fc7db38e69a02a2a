/**
 * Proxyless gRPC workloads with mesh certificates for the mTLS e2e tests: a mesh root made by
 * lib/ca (its self-signed root, as the Node CA makes it), workload certificates it signs for a
 * SPIFFE identity (what the agent will do for real workloads), written as the PEM files a gRPC
 * bootstrap's `file_watcher` certificate provider `default` reads, and the bootstrap itself.
 */
// Before @peculiar/x509: tsyringe needs the Reflect metadata API when it loads.
import "reflect-metadata";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { Pkcs10CertificateRequestGenerator } from "@peculiar/x509";
import type { CaBundle } from "../../../lib/ca/bundle.ts";
import { exportPrivateKeyPem } from "../../../lib/ca/private-key.ts";
import { loadOrCreateRoot } from "../../../lib/ca/self-signed.ts";
import { signCsr } from "../../../lib/ca/sign.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { whoMethod } from "../support/backends.ts";

const day = 24 * 3_600_000;
const ec = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };

/** A mesh root (lib/ca's self-signed root for `trustDomain`). */
export async function meshRoot(trustDomain = "cluster.local"): Promise<CaBundle> {
  const { bundle } = await loadOrCreateRoot(createMemoryStore(), {
    trustDomain,
    ttlMs: day,
    now: Date.now(),
  });
  return bundle;
}

/** The PEM files of one workload: its chain (leaf first), its key, the mesh root. */
export interface WorkloadFiles {
  certificateFile: string;
  privateKeyFile: string;
  caCertificateFile: string;
}

/** Signs a fresh key's CSR for `identity` (a SPIFFE ID) under `root`, and writes the files in `dir`. */
export async function workloadCertificate(
  root: CaBundle,
  identity: string,
  dir: string,
): Promise<WorkloadFiles> {
  mkdirSync(dir, { recursive: true });
  const keys = (await crypto.subtle.generateKey(ec, true, ["sign", "verify"])) as CryptoKeyPair;
  const csr = await Pkcs10CertificateRequestGenerator.create(
    { name: "O=", keys, signingAlgorithm: ec },
    crypto,
  );
  const signed = await signCsr(
    root,
    { csrPem: csr.toString("pem"), identity, requestedMs: day },
    { defaultMs: day, maxMs: day },
    Date.now(),
  );
  if (!signed.ok) throw new Error(`signing ${identity}: ${signed.error.message}`);
  const files = {
    certificateFile: join(dir, "cert-chain.pem"),
    privateKeyFile: join(dir, "key.pem"),
    caCertificateFile: join(dir, "root-cert.pem"),
  };
  // The chain without its root (the peer has it); the root alone is what the peer is checked against.
  writeFileSync(files.certificateFile, signed.certChain.slice(0, -1).join(""));
  writeFileSync(files.privateKeyFile, await exportPrivateKeyPem(keys.privateKey));
  writeFileSync(files.caCertificateFile, root.rootCertPem);
  return files;
}

/** A proxyless node: Istio's sidecar node id for pod `pod` at `ip`, metadata GENERATOR grpc and its labels. */
export interface GrpcNode {
  ip: string;
  pod: string;
  namespace: string;
  labels: Record<string, string>;
}

/**
 * The bootstrap (JSON) of a proxyless workload talking to our ADS server: its node, the server
 * listener name template Istio's agent writes, and (with `files`) the certificate provider `default`.
 */
export function grpcBootstrap(xdsPort: number, node: GrpcNode, files?: WorkloadFiles): string {
  return JSON.stringify({
    xds_servers: [
      {
        server_uri: `127.0.0.1:${xdsPort}`,
        channel_creds: [{ type: "insecure" }],
        server_features: ["xds_v3"],
      },
    ],
    node: {
      id: `sidecar~${node.ip}~${node.pod}.${node.namespace}~${node.namespace}.svc.cluster.local`,
      locality: { region: "e2e", zone: "a", sub_zone: "" },
      metadata: { GENERATOR: "grpc", NAMESPACE: node.namespace, LABELS: node.labels, INSTANCE_IPS: node.ip },
    },
    server_listener_resource_name_template: "xds.istio.io/grpc/lds/inbound/%s",
    ...(files && {
      certificate_providers: {
        default: {
          plugin_name: "file_watcher",
          config: {
            certificate_file: files.certificateFile,
            private_key_file: files.privateKeyFile,
            ca_certificate_file: files.caCertificateFile,
            refresh_interval: "600s",
          },
        },
      },
    }),
  });
}

/** One Who call on `client`; the answer (what the server saw of its peer), or `error:<code>`. */
export function who(client: grpc.Client, deadlineMs = 1000): Promise<string> {
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      whoMethod.path,
      whoMethod.requestSerialize,
      whoMethod.responseDeserialize,
      Buffer.alloc(0),
      new grpc.Metadata(),
      { deadline: Date.now() + deadlineMs },
      (err, value) => resolve(err ? `error:${err.code}` : (value as Buffer).toString()),
    );
  });
}
