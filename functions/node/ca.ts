/**
 * The certificate authority of the Node runtime: the plug-in CA read from ROOT_CA_DIR (Istio's
 * layout), or the self-signed root kept in the store; callers authenticated with the XDS_AUTH=jwt
 * keys and issuer for TOKEN_AUDIENCES; istiod's metrics on the runtime's registry (functions/ca.ts's
 * setupCa, shared with the Worker). What cannot be served is said once at start-up, naming what to
 * configure; a bad ROOT_CA_DIR stops start-up.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { isLoopbackHost } from "../../lib/auth/config.ts";
import { type CaBundle, loadPluginCa, type PluginCaFiles, pluginCaFileNames } from "../../lib/ca/bundle.ts";
import type { Config } from "../../lib/config.ts";
import { type CaService, type CaSetupDeps, setupCa } from "../ca.ts";

/** The CA to serve, or why none is; throws (naming ROOT_CA_DIR) when the plug-in CA is unusable. */
export async function setupNodeCa(config: Config, deps: CaSetupDeps): Promise<CaService> {
  const dir = config.ca.rootCaDir;
  const memory = config.store.kind === "memory";
  return setupCa(config, deps, {
    ...(dir !== undefined && {
      plugin: { where: `ROOT_CA_DIR=${dir}`, load: () => readPluginCa(dir, deps.now()) },
    }),
    ...(memory &&
      !isLoopbackHost(config.host) && {
        refuseSelfSigned:
          `no plug-in CA and EDGEPILOT_STORE=memory on HOST=${config.host}: a self-signed root kept in memory would ` +
          "change on every restart and break every workload's trust. Set ROOT_CA_DIR to a directory holding " +
          "ca-cert.pem, ca-key.pem, cert-chain.pem and root-cert.pem, or use a durable store (EDGEPILOT_STORE=file or dynamodb) " +
          "to keep a generated root, or ENABLE_CA_SERVER=false",
      }),
    ...(memory && {
      volatileStore:
        "ca: the self-signed root lives in the memory store: a restart generates a new one (set ROOT_CA_DIR or a durable store)",
    }),
  });
}

/** Reads Istio's plug-in files from `dir` and verifies them; every failure names ROOT_CA_DIR and the file. */
async function readPluginCa(dir: string, now: number): Promise<CaBundle> {
  const files = {} as PluginCaFiles;
  for (const name of pluginCaFileNames)
    files[name] = await readFile(join(dir, name), "utf8").catch((e: unknown) => {
      throw new Error(
        `ROOT_CA_DIR=${dir}: cannot read ${name} (${e instanceof Error ? e.message : e}); a plug-in CA holds ${pluginCaFileNames.join(", ")}`,
      );
    });
  const loaded = await loadPluginCa(files, now);
  if (!loaded.ok) throw new Error(`ROOT_CA_DIR=${dir}: ${loaded.error}`);
  return loaded.bundle;
}
