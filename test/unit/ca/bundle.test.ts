/**
 * Loading a plug-in CA (lib/ca/bundle.ts) and the stored self-signed root (lib/ca/self-signed.ts):
 * every key form Istio accepts, the checks istiod makes on a plug-in bundle, and one root per
 * store however many instances start at once.
 */
import "reflect-metadata";
import { BasicConstraintsExtension, X509Certificate } from "@peculiar/x509";
import { describe, expect, it } from "vitest";
import { loadPluginCa, type PluginCaFiles, splitPemCertificates } from "../../../lib/ca/bundle.ts";
import { loadOrCreateRoot } from "../../../lib/ca/self-signed.ts";
import { signCsr } from "../../../lib/ca/sign.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import type { Store } from "../../../lib/store/store.ts";
import { csrPem, day, type KeyFormat, now, pluginCa, productpage, trustDomain } from "./builders.ts";

describe("loadPluginCa", () => {
  it.each<[KeyFormat, string]>([
    ["pkcs8", "ECDSA P-256"],
    ["sec1", "ECDSA P-256"],
    ["pkcs1", "RSA 2048"],
  ])("loads a %s ca-key.pem (%s)", async (keyFormat, describe) => {
    const ca = await pluginCa({ keyFormat });
    const loaded = await loadPluginCa(ca.files, now);
    if (!loaded.ok) throw new Error(loaded.error);
    expect(loaded.bundle.signingKey.describe).toBe(describe);
    expect(loaded.bundle.signingCert.toString("pem")).toBe(ca.intermediatePem.trim());
    expect(loaded.bundle.source).toBe("plug-in");
  });

  it("refuses what istiod refuses, naming the file", async () => {
    const ca = await pluginCa();
    const other = await pluginCa();
    const cases: [string, Partial<typeof ca.files>, number, RegExp][] = [
      [
        "a key of another CA",
        { "ca-key.pem": other.files["ca-key.pem"] },
        now,
        /^ca-key.pem: the key is not the key of ca-cert.pem$/,
      ],
      ["no key", { "ca-key.pem": "nothing" }, now, /^ca-key.pem: /],
      [
        "a root that did not sign it",
        { "root-cert.pem": other.rootPem, "cert-chain.pem": "" },
        now,
        /^ca-cert.pem: cannot verify/,
      ],
      ["an empty root-cert.pem", { "root-cert.pem": "" }, now, /^root-cert.pem: no CERTIFICATE block$/],
      ["no certificate", { "ca-cert.pem": "" }, now, /^ca-cert.pem: no CERTIFICATE block$/],
      ["an expired intermediate", {}, now + 400 * day, /^ca-cert.pem: cannot verify .* is not valid now/],
      [
        "a certificate that is no CA",
        { "ca-cert.pem": await leafOf(ca.files) },
        now,
        /^ca-cert.pem: certificate is not authorized to sign other certificates$/,
      ],
    ];
    for (const [name, change, at, error] of cases) {
      const loaded = await loadPluginCa({ ...ca.files, ...change }, at);
      expect(loaded.ok, name).toBe(false);
      if (!loaded.ok) expect(loaded.error, name).toMatch(error);
    }
  });

  it("splits a PEM bundle into its certificates, in order", async () => {
    const ca = await pluginCa();
    expect(splitPemCertificates(ca.files["cert-chain.pem"])).toEqual([
      ca.intermediatePem.trim(),
      ca.rootPem.trim(),
    ]);
  });
});

/** A workload certificate issued by a plug-in CA. */
async function leafOf(files: PluginCaFiles): Promise<string> {
  const loaded = await loadPluginCa(files, now);
  if (!loaded.ok) throw new Error(loaded.error);
  const signed = await signCsr(
    loaded.bundle,
    { csrPem: await csrPem(), identity: productpage, requestedMs: 0 },
    { defaultMs: day, maxMs: day },
    now,
  );
  if (!signed.ok) throw new Error(signed.error.message);
  return signed.certChain[0] as string;
}

describe("loadOrCreateRoot", () => {
  const options = { trustDomain, ttlMs: 3650 * day, now };

  it("generates an ECDSA P-256 root for the trust domain once and keeps it in the store", async () => {
    const store = createMemoryStore();
    const first = await loadOrCreateRoot(store, options);
    expect(first.created).toBe(true);
    const root = first.bundle.signingCert;
    expect(root.subject).toBe(`O=${trustDomain}`);
    expect(root.issuer).toBe(root.subject);
    expect(root.getExtension(BasicConstraintsExtension)?.ca).toBe(true);
    expect(root.notAfter.getTime() - root.notBefore.getTime()).toBe(3650 * day);
    expect(first.bundle.signingKey.describe).toBe("ECDSA P-256");
    expect(first.bundle.certChainPem).toBe("");
    expect(await root.isSelfSigned(crypto)).toBe(true);
    const again = await loadOrCreateRoot(store, { ...options, now: now + day });
    expect(again.created).toBe(false);
    expect(again.bundle.rootCertPem).toBe(first.bundle.rootCertPem);
  });

  it("gives instances starting together over one store the same root", async () => {
    const store = createMemoryStore();
    let puts = 0;
    // Every instance reads "no root" before any of them writes: the conditional put decides.
    const racing: Store = {
      ...store,
      get: async (key) => (puts === 0 ? undefined : store.get(key)),
      put: async (key, value, opts) => {
        puts++;
        return store.put(key, value, opts);
      },
    };
    const all = await Promise.all([1, 2, 3, 4].map(() => loadOrCreateRoot(racing, options)));
    expect(all.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(all.map((r) => r.bundle.rootCertPem)).size).toBe(1);
    expect(puts).toBe(4);
    expect(new X509Certificate(all[0]?.bundle.rootCertPem as string).subject).toBe(`O=${trustDomain}`);
  });

  it("refuses a stored root that does not parse, instead of replacing it", async () => {
    const store = createMemoryStore();
    await store.put("ca/root", { certPem: "garbage", keyPem: "garbage" });
    await expect(loadOrCreateRoot(store, options)).rejects.toThrow(
      /the stored root \(ca\/root\) does not parse/,
    );
  });
});
