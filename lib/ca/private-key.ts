/**
 * CA private keys as WebCrypto keys, in the PEM forms Istio's plug-in CA layout accepts
 * (security/pkg/pki/util ParsePemEncodedKey): PKCS#8 `PRIVATE KEY`, SEC1 `EC PRIVATE KEY` and
 * PKCS#1 `RSA PRIVATE KEY`. WebCrypto imports only PKCS#8, so the other two are wrapped with the
 * @peculiar ASN.1 schemas (no hand-written DER). Signing uses the hash Go's x509 picks per key:
 * SHA-256 for RSA and P-256, SHA-384 for P-384, SHA-512 for P-521.
 */
// Before @peculiar/x509: tsyringe needs the Reflect metadata API when it loads.
import "reflect-metadata";
import { ECParameters, ECPrivateKey, id_ecPublicKey } from "@peculiar/asn1-ecc";
import { PrivateKeyInfo } from "@peculiar/asn1-pkcs8";
import { id_rsaEncryption, RSAPrivateKey, rsaEncryption } from "@peculiar/asn1-rsa";
import { AsnConvert, OctetString } from "@peculiar/asn1-schema";
import { AlgorithmIdentifier } from "@peculiar/asn1-x509";
import { PemConverter } from "@peculiar/x509";

/** A WebCrypto signature algorithm with its hash (RSASSA-PKCS1-v1_5 or ECDSA). */
export interface SignAlgorithm {
  name: string;
  hash: string;
}

/** A signing key and the WebCrypto algorithm its signatures use. */
export interface SigningKey {
  key: CryptoKey;
  /** What `crypto.subtle.sign` and @peculiar/x509 take: the key's algorithm with its hash. */
  algorithm: SignAlgorithm;
  /** For logs and errors: `ECDSA P-256`, `RSA 4096`. */
  describe: string;
}

const curves: Record<string, { name: string; hash: string }> = {
  "1.2.840.10045.3.1.7": { name: "P-256", hash: "SHA-256" },
  "1.3.132.0.34": { name: "P-384", hash: "SHA-384" },
  "1.3.132.0.35": { name: "P-521", hash: "SHA-512" },
};

/** The key of a PEM text, or why it cannot be used (no key, another type, an unsupported curve). */
export async function importPrivateKeyPem(
  pem: string,
): Promise<{ ok: true; key: SigningKey } | { ok: false; error: string }> {
  let blocks: { type: string; rawData: ArrayBuffer }[];
  try {
    blocks = PemConverter.decodeWithHeaders(pem);
  } catch (e) {
    return { ok: false, error: `not PEM: ${message(e)}` };
  }
  const block = blocks.find((b) => b.type.endsWith("PRIVATE KEY"));
  if (!block) return { ok: false, error: "no PRIVATE KEY block" };
  try {
    const pkcs8 = toPkcs8(block.type, block.rawData);
    return { ok: true, key: await importPkcs8(pkcs8) };
  } catch (e) {
    return { ok: false, error: `${block.type}: ${message(e)}` };
  }
}

/** The PKCS#8 DER of a key block of any of the three types. */
function toPkcs8(type: string, der: ArrayBuffer): ArrayBuffer {
  switch (type) {
    case "PRIVATE KEY":
      return der;
    case "RSA PRIVATE KEY":
      AsnConvert.parse(der, RSAPrivateKey); // refuses what is not PKCS#1
      return AsnConvert.serialize(
        new PrivateKeyInfo({ privateKeyAlgorithm: rsaEncryption, privateKey: new OctetString(der) }),
      );
    case "EC PRIVATE KEY": {
      const ec = AsnConvert.parse(der, ECPrivateKey);
      const namedCurve = ec.parameters?.namedCurve;
      if (!namedCurve) throw new Error("the key names no curve");
      return AsnConvert.serialize(
        new PrivateKeyInfo({
          privateKeyAlgorithm: new AlgorithmIdentifier({
            algorithm: id_ecPublicKey,
            parameters: AsnConvert.serialize(new ECParameters({ namedCurve })),
          }),
          privateKey: new OctetString(der),
        }),
      );
    }
    default:
      throw new Error("unsupported key block (PRIVATE KEY, EC PRIVATE KEY or RSA PRIVATE KEY)");
  }
}

/** Imports a PKCS#8 key for signing, with the algorithm its key type calls for. */
async function importPkcs8(pkcs8: ArrayBuffer): Promise<SigningKey> {
  const info = AsnConvert.parse(pkcs8, PrivateKeyInfo);
  const oid = info.privateKeyAlgorithm.algorithm;
  if (oid === id_rsaEncryption) {
    const algorithm: SignAlgorithm = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" };
    const key = await crypto.subtle.importKey("pkcs8", pkcs8, algorithm, true, ["sign"]);
    const bits = (key.algorithm as { modulusLength?: number }).modulusLength;
    return { key, algorithm, describe: `RSA ${bits}` };
  }
  if (oid === id_ecPublicKey) {
    const params = info.privateKeyAlgorithm.parameters;
    const namedCurve = params ? AsnConvert.parse(params, ECParameters).namedCurve : undefined;
    const curve = namedCurve ? curves[namedCurve] : undefined;
    if (!curve) throw new Error(`unsupported EC curve ${namedCurve ?? "(none)"} (P-256, P-384 or P-521)`);
    const key = await crypto.subtle.importKey(
      "pkcs8",
      pkcs8,
      { name: "ECDSA", namedCurve: curve.name },
      true,
      ["sign"],
    );
    return { key, algorithm: { name: "ECDSA", hash: curve.hash }, describe: `ECDSA ${curve.name}` };
  }
  throw new Error(`unsupported key algorithm ${oid} (RSA or ECDSA)`);
}

/** Generates the ECDSA P-256 key a self-signed root is made with (extractable: it is stored). */
export async function generateSigningKey(): Promise<{ pair: CryptoKeyPair; signing: SigningKey }> {
  const pair = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
    "sign",
    "verify",
  ])) as CryptoKeyPair;
  return {
    pair,
    signing: { key: pair.privateKey, algorithm: { name: "ECDSA", hash: "SHA-256" }, describe: "ECDSA P-256" },
  };
}

/** The PKCS#8 PEM of an extractable private key (how a generated root's key is stored). */
export async function exportPrivateKeyPem(key: CryptoKey): Promise<string> {
  return PemConverter.encode((await crypto.subtle.exportKey("pkcs8", key)) as ArrayBuffer, "PRIVATE KEY");
}

/**
 * The SubjectPublicKeyInfo DER of a private key's public half (its JWK without the private
 * members, imported as a public key), so it can be compared with a certificate's: a plug-in CA
 * whose key is not its certificate's is refused, as istiod's tls.X509KeyPair check does.
 */
export async function publicSpkiOf(signing: SigningKey): Promise<ArrayBuffer> {
  const jwk = (await crypto.subtle.exportKey("jwk", signing.key)) as JsonWebKey;
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, key_ops: _ops, ...pub } = jwk;
  const params =
    pub.kty === "RSA"
      ? { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }
      : { name: "ECDSA", namedCurve: pub.crv as string };
  const key = await crypto.subtle.importKey("jwk", pub, params, true, ["verify"]);
  return (await crypto.subtle.exportKey("spki", key)) as ArrayBuffer;
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
