/** Builders for CA tests: CSRs as istio-agent makes them, and plug-in CA layouts (root ─▶ intermediate) made here. */
// Before @peculiar/x509: tsyringe needs the Reflect metadata API when it loads.
import "reflect-metadata";
import { createPrivateKey } from "node:crypto";
import {
  BasicConstraintsExtension,
  type Extension,
  KeyUsageFlags,
  KeyUsagesExtension,
  Pkcs10CertificateRequestGenerator,
  SubjectAlternativeNameExtension,
  SubjectKeyIdentifierExtension,
  X509CertificateGenerator,
} from "@peculiar/x509";
import type { PluginCaFiles } from "../../../lib/ca/bundle.ts";

/** The injected clock: 2026-01-01T00:00:00Z. */
export const now = Date.UTC(2026, 0, 1);
export const day = 24 * 3_600_000;
export const trustDomain = "cluster.local";
export const productpage = "spiffe://cluster.local/ns/default/sa/productpage";

const ec = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };
const rsa = {
  name: "RSASSA-PKCS1-v1_5",
  modulusLength: 2048,
  publicExponent: new Uint8Array([1, 0, 1]),
  hash: "SHA-256",
};

/** A new key pair of either kind. */
export async function keyPair(kind: "ec" | "rsa" = "ec"): Promise<CryptoKeyPair> {
  return (await crypto.subtle.generateKey(kind === "ec" ? ec : rsa, true, [
    "sign",
    "verify",
  ])) as CryptoKeyPair;
}

/** A CSR PEM with these SANs (default: the identity istio-agent asks for) and subject. */
export async function csrPem(
  options: {
    sans?: { type: "url" | "dns" | "ip" | "email"; value: string }[];
    cn?: string;
    keys?: CryptoKeyPair;
  } = {},
): Promise<string> {
  const keys = options.keys ?? (await keyPair());
  const sans = options.sans ?? [{ type: "url", value: productpage }];
  const extensions: Extension[] = sans.length > 0 ? [new SubjectAlternativeNameExtension(sans)] : [];
  const csr = await Pkcs10CertificateRequestGenerator.create(
    {
      ...(options.cn ? { name: `CN=${options.cn}` } : { name: "O=" }),
      keys,
      signingAlgorithm: ec,
      extensions,
    },
    crypto,
  );
  return csr.toString("pem");
}

/** A CA certificate for `keys`, signed by `issuer` (self-signed when absent), valid `days` from `from`. */
async function caCert(
  subject: string,
  keys: CryptoKeyPair,
  issuer: { subject: string; keys: CryptoKeyPair } | undefined,
  from: number,
  days: number,
  algorithm: object,
) {
  return X509CertificateGenerator.create(
    {
      subject,
      issuer: issuer?.subject ?? subject,
      notBefore: new Date(from),
      notAfter: new Date(from + days * day),
      publicKey: keys.publicKey,
      signingKey: (issuer?.keys ?? keys).privateKey,
      signingAlgorithm: algorithm,
      extensions: [
        new BasicConstraintsExtension(true, undefined, true),
        new KeyUsagesExtension(KeyUsageFlags.keyCertSign | KeyUsageFlags.cRLSign, true),
        await SubjectKeyIdentifierExtension.create(keys.publicKey, false, crypto),
      ],
    },
    crypto,
  );
}

/** How the plug-in key is written: PKCS#8, SEC1 (`EC PRIVATE KEY`) or PKCS#1 (`RSA PRIVATE KEY`). */
export type KeyFormat = "pkcs8" | "sec1" | "pkcs1";

/**
 * Istio's plug-in layout as `istioctl`'s tooling makes it: an RSA root, an intermediate CA
 * (ECDSA, or RSA for pkcs1) whose key is ca-key.pem, cert-chain.pem = intermediate + root.
 */
export async function pluginCa(
  options: { keyFormat?: KeyFormat; intermediateDays?: number; from?: number } = {},
): Promise<{ files: PluginCaFiles; rootPem: string; intermediatePem: string; rootKeys: CryptoKeyPair }> {
  const format = options.keyFormat ?? "pkcs8";
  const from = options.from ?? now - day;
  const rootKeys = await keyPair("rsa");
  const interKeys = await keyPair(format === "pkcs1" ? "rsa" : "ec");
  const root = await caCert("O=Istio,CN=Root CA", rootKeys, undefined, from, 3650, rsa);
  const inter = await caCert(
    "O=Istio,CN=Intermediate CA,L=cluster-a",
    interKeys,
    { subject: "O=Istio,CN=Root CA", keys: rootKeys },
    from,
    options.intermediateDays ?? 365,
    rsa,
  );
  const pkcs8 = Buffer.from((await crypto.subtle.exportKey("pkcs8", interKeys.privateKey)) as ArrayBuffer);
  const key = createPrivateKey({ key: pkcs8, format: "der", type: "pkcs8" });
  const keyPem =
    format === "pkcs8"
      ? (key.export({ format: "pem", type: "pkcs8" }) as string)
      : (key.export({ format: "pem", type: format }) as string);
  const rootPem = `${root.toString("pem")}\n`;
  const intermediatePem = `${inter.toString("pem")}\n`;
  return {
    files: {
      "ca-cert.pem": intermediatePem,
      "ca-key.pem": keyPem,
      "cert-chain.pem": intermediatePem + rootPem,
      "root-cert.pem": rootPem,
    },
    rootPem,
    intermediatePem,
    rootKeys,
  };
}
