/**
 * functions/node/ca.ts: which CA the Node runtime serves, or why none, from its configuration —
 * never a self-signed root in the memory store off loopback — and a ROOT_CA_DIR that stops start-up.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { setupNodeCa } from "../../../functions/node/ca.ts";
import { createKeySet } from "../../../lib/auth/key-set.ts";
import { type Env, parseConfig } from "../../../lib/config.ts";
import { createRegistry } from "../../../lib/metrics/registry.ts";
import { createMemoryStore } from "../../../lib/store/memory.ts";
import { now, pluginCa } from "../ca/builders.ts";

const jwt: Env = {
  XDS_AUTH: "jwt",
  XDS_JWT_ISSUER: "https://issuer",
  XDS_JWT_AUDIENCE: "edgepilot",
  XDS_JWT_HMAC_SECRET: "a-shared-hmac-secret-of-32-chars!",
};

async function setup(env: Env) {
  const parsed = parseConfig(env);
  if (!parsed.ok) throw new Error(parsed.errors.join("\n"));
  const lines: string[] = [];
  const store = createMemoryStore();
  const service = await setupNodeCa(parsed.config, {
    store,
    keys: createKeySet({ hmacSecret: jwt.XDS_JWT_HMAC_SECRET as string, now: () => now }),
    registry: createRegistry(),
    now: () => now,
    log: (line) => lines.push(line),
  });
  return { service, lines, store };
}

describe("setupNodeCa", () => {
  const unavailable: [string, Env, RegExp][] = [
    ["without XDS_AUTH=jwt", {}, /set XDS_AUTH=jwt with XDS_JWT_ISSUER and a key source/],
    ["when disabled", { ...jwt, ENABLE_CA_SERVER: "false" }, /ENABLE_CA_SERVER=false/],
    [
      "over the memory store off loopback",
      { ...jwt, HOST: "0.0.0.0" },
      /no plug-in CA and EDGEPILOT_STORE=memory on HOST=0.0.0.0: .* Set ROOT_CA_DIR .* or use a durable store/,
    ],
  ];
  it.each(unavailable)("serves no CA %s, and says so", async (_name, env, reason) => {
    const { service, lines, store } = await setup(env);
    expect(service).toEqual({ unavailable: expect.stringMatching(reason) });
    expect(lines.join("\n")).toMatch(reason);
    expect(await store.get("ca/root")).toBeUndefined();
  });

  it("keeps a generated root in the memory store on loopback, with a warning", async () => {
    const { service, lines, store } = await setup(jwt);
    expect("ca" in service).toBe(true);
    expect(await store.get("ca/root")).toBeDefined();
    expect(lines.join("\n")).toMatch(/the self-signed root lives in the memory store/);
  });

  it("signs with a plug-in CA from ROOT_CA_DIR, stores nothing, and stops on a broken one", async () => {
    const ca = await pluginCa();
    const dir = mkdtempSync(join(tmpdir(), "edgepilot-node-ca-"));
    for (const [name, text] of Object.entries(ca.files)) writeFileSync(join(dir, name), text);
    const { service, store, lines } = await setup({ ...jwt, HOST: "0.0.0.0", ROOT_CA_DIR: dir });
    expect("ca" in service && service.ca.bundle.source).toBe("plug-in");
    expect(await store.get("ca/root")).toBeUndefined();
    expect(lines.join("\n")).toMatch(/signs with the plug-in CA of ROOT_CA_DIR=/);
    writeFileSync(join(dir, "ca-key.pem"), (await pluginCa()).files["ca-key.pem"]);
    await expect(setup({ ...jwt, ROOT_CA_DIR: dir })).rejects.toThrow(
      /^ROOT_CA_DIR=.*: ca-key.pem: the key is not the key of ca-cert.pem$/,
    );
  });
});
