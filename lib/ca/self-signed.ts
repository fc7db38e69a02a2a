/**
 * The self-signed root a CA uses when no plug-in CA is configured, as istiod's self-signed CA
 * (NewSelfSignedIstioCAOptions): organization = the trust domain, a CA certificate that only
 * signs certificates, valid CITADEL_SELF_SIGNED_CA_CERT_TTL; an ECDSA P-256 key. It is generated
 * once and kept in the Store (istiod keeps it in the istio-ca-secret Secret); the first write is
 * a conditional put, so instances starting together over one store all end up with the same root.
 */
// Before @peculiar/x509: tsyringe needs the Reflect metadata API when it loads.
import "reflect-metadata";
import {
  BasicConstraintsExtension,
  KeyUsageFlags,
  KeyUsagesExtension,
  SubjectKeyIdentifierExtension,
  X509CertificateGenerator,
} from "@peculiar/x509";
import { keys } from "../store/keys.ts";
import type { Store } from "../store/store.ts";
import { type CaBundle, parseCertificates } from "./bundle.ts";
import { exportPrivateKeyPem, generateSigningKey, importPrivateKeyPem } from "./private-key.ts";

/** The stored root (keys.caRoot()): the certificate and its PKCS#8 key, as PEM. */
export interface StoredCaRoot {
  certPem: string;
  keyPem: string;
}

/** What the root is made with. */
export interface SelfSignedOptions {
  /** TRUST_DOMAIN: the root's organization. */
  trustDomain: string;
  /** CITADEL_SELF_SIGNED_CA_CERT_TTL (ms). */
  ttlMs: number;
  now: number;
}

/** The stored root, or a new one stored by this call (`created`); throws when the stored one is unusable. */
export async function loadOrCreateRoot(
  store: Store,
  options: SelfSignedOptions,
): Promise<{ bundle: CaBundle; created: boolean }> {
  const key = keys.caRoot();
  const existing = await store.get<StoredCaRoot>(key);
  if (existing) return { bundle: await bundleOf(existing.value), created: false };
  const fresh = await generateRoot(options);
  const put = await store.put(key, fresh, { ifVersion: 0 });
  if (put.ok) return { bundle: await bundleOf(fresh), created: true };
  // Another instance stored its root first: use that one, so every instance signs under one root.
  const winner = await store.get<StoredCaRoot>(key);
  if (!winner) throw new Error(`ca: ${key} was written and deleted while this instance stored its root`);
  return { bundle: await bundleOf(winner.value), created: false };
}

/** A new self-signed root and its key, as stored. */
export async function generateRoot(options: SelfSignedOptions): Promise<StoredCaRoot> {
  const { pair } = await generateSigningKey();
  const cert = await X509CertificateGenerator.createSelfSigned(
    {
      name: [{ O: [options.trustDomain] }],
      notBefore: new Date(options.now),
      notAfter: new Date(options.now + options.ttlMs),
      keys: pair,
      signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
      extensions: [
        new BasicConstraintsExtension(true, undefined, true),
        new KeyUsagesExtension(KeyUsageFlags.keyCertSign, true),
        await SubjectKeyIdentifierExtension.create(pair.publicKey, false, crypto),
      ],
    },
    crypto,
  );
  return { certPem: `${cert.toString("pem")}\n`, keyPem: `${await exportPrivateKeyPem(pair.privateKey)}\n` };
}

/** The bundle of a stored root: it signs, and it is the whole root bundle (no chain between). */
async function bundleOf(stored: StoredCaRoot): Promise<CaBundle> {
  const certs = parseCertificates(stored.certPem);
  const cert = certs.ok ? certs.certs[0] : undefined;
  if (!cert) throw new Error(`ca: the stored root (${keys.caRoot()}) does not parse`);
  const key = await importPrivateKeyPem(stored.keyPem);
  if (!key.ok) throw new Error(`ca: the stored root's key (${keys.caRoot()}): ${key.error}`);
  return {
    signingCert: cert,
    signingKey: key.key,
    certChainPem: "",
    rootCertPem: stored.certPem,
    rootCert: cert,
    source: "self-signed",
  };
}
