/**
 * functions/ca-variables.ts (the Worker's and the Lambda's CA source) and functions/ca.ts's lazyCa:
 * four variables or none, a partial or broken set served as unavailable naming the variable, a
 * store failure rejected so that the host's next call builds the CA again.
 */
import { describe, expect, it } from "vitest";
import { type CaService, lazyCa } from "../../../functions/ca.ts";
import { type PluginCaValues, setupCaFromVariables } from "../../../functions/ca-variables.ts";
import { createKeySet } from "../../../lib/auth/key-set.ts";
import { type Env, parseConfig } from "../../../lib/config.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import type { Store } from "../../../lib/store/store.ts";
import { now, pluginCa } from "../ca/builders.ts";

const jwt: Env = {
  XDS_AUTH: "jwt",
  XDS_JWT_ISSUER: "https://issuer",
  XDS_JWT_AUDIENCE: "edgepilot",
  XDS_JWT_HMAC_SECRET: "a-shared-hmac-secret-of-32-chars!",
};

async function setup(values: PluginCaValues, store: Store = createMemoryStore()) {
  const parsed = parseConfig(jwt);
  if (!parsed.ok) throw new Error(parsed.errors.join("\n"));
  const lines: string[] = [];
  const service = await setupCaFromVariables(values, parsed.config, {
    store,
    keys: createKeySet({ hmacSecret: jwt.XDS_JWT_HMAC_SECRET as string, now: () => now }),
    now: () => now,
    log: (line) => lines.push(line),
  });
  return { service, lines, store };
}

/** The four variables of a plug-in layout. */
async function variables(): Promise<PluginCaValues> {
  const { files } = await pluginCa();
  return {
    CA_CERT_PEM: files["ca-cert.pem"],
    CA_KEY_PEM: files["ca-key.pem"],
    CERT_CHAIN_PEM: files["cert-chain.pem"],
    ROOT_CERT_PEM: files["root-cert.pem"],
  };
}

describe("setupCaFromVariables", () => {
  it("none set (or set empty): the self-signed root, generated once and kept in the store", async () => {
    const { service, store } = await setup({ CA_CERT_PEM: "" });
    expect("ca" in service && service.ca.bundle.source).toBe("self-signed");
    const stored = await store.get("ca/root");
    expect(stored).toBeDefined();
    const again = await setup({}, store);
    expect("ca" in again.service && again.service.ca.bundle.rootCertPem).toBe(
      "ca" in service && service.ca.bundle.rootCertPem,
    );
    expect(again.lines.join("\n")).toMatch(/signs with the self-signed root from the store/);
  });

  it("all four: the plug-in CA, named by its variables, nothing stored", async () => {
    const { service, lines, store } = await setup(await variables());
    expect("ca" in service && service.ca.bundle.source).toBe("plug-in");
    expect(lines.join("\n")).toMatch(
      /signs with the plug-in CA of CA_CERT_PEM, CA_KEY_PEM, CERT_CHAIN_PEM, ROOT_CERT_PEM \(/,
    );
    expect(await store.get("ca/root")).toBeUndefined();
  });

  const broken: [string, () => Promise<PluginCaValues>, RegExp][] = [
    [
      "some set and not others",
      async () => ({ CA_CERT_PEM: "x", ROOT_CERT_PEM: "y" }),
      /^the certificate authority is not configured: the plug-in CA: CA_KEY_PEM, CERT_CHAIN_PEM not set: a plug-in CA needs all of CA_CERT_PEM, CA_KEY_PEM, CERT_CHAIN_PEM, ROOT_CERT_PEM$/,
    ],
    [
      "a key that is not the certificate's (named as the variable, not the file)",
      async () => ({ ...(await variables()), CA_KEY_PEM: (await pluginCa()).files["ca-key.pem"] }),
      /^the certificate authority is not configured: the plug-in CA: CA_KEY_PEM: the key is not the key of ca-cert.pem$/,
    ],
  ];
  it.each(
    broken,
  )("%s: unavailable with the reason, said once as a warning", async (_name, values, reason) => {
    const { service, lines, store } = await setup(await values());
    expect(service).toEqual({ unavailable: expect.stringMatching(reason) });
    expect(
      lines.filter((l) => l.startsWith("ca: IstioCertificateService is not served: the plug-in CA")),
    ).toHaveLength(1);
    expect(await store.get("ca/root")).toBeUndefined();
  });

  it("rejects when the store cannot be read, so the host may try again", async () => {
    const store: Store = { ...createMemoryStore(), get: () => Promise.reject(new Error("store down")) };
    await expect(setup({}, store)).rejects.toThrow("store down");
  });
});

describe("lazyCa", () => {
  it("builds once and keeps it; a rejected build is not kept, the next call builds again", async () => {
    const built: CaService = { unavailable: "test" };
    let calls = 0;
    const get = lazyCa(async () => {
      calls++;
      if (calls === 1) throw new Error("store down");
      return built;
    });
    await expect(get()).rejects.toThrow("store down");
    expect(await get()).toBe(built);
    expect(await get()).toBe(built);
    expect(calls).toBe(2);
  });

  it("calls made while a build runs share it", async () => {
    let calls = 0;
    const get = lazyCa(async () => {
      calls++;
      return { unavailable: "test" };
    });
    const [a, b] = await Promise.all([get(), get()]);
    expect(a).toBe(b);
    expect(calls).toBe(1);
  });
});
