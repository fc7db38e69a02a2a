/**
 * Istio's plug-in CA from four variables (CA_CERT_PEM, CA_KEY_PEM, CERT_CHAIN_PEM, ROOT_CERT_PEM:
 * the files of ROOT_CA_DIR as text), for hosts with no file system to read: the Worker's secrets
 * and the Lambda's (filled from Secrets Manager at cold start). None set: the store's self-signed
 * root. Some set and not others, or a bundle that does not verify: the CA is served as unavailable
 * with the reason naming the variable, so xDS keeps serving while the CA answers FailedPrecondition.
 */
import { loadPluginCa, type PluginCaFiles } from "../lib/ca/bundle.ts";
import { type PluginCaVariable, pluginCaVariables } from "../lib/ca/config.ts";
import type { Config } from "../lib/config.ts";
import { logWarn } from "../lib/log/line-log.ts";
import { type CaService, type CaSetupDeps, setupCa } from "./ca.ts";

/** Where the four variables are read: the Worker's env, the Lambda's process.env. */
export type PluginCaValues = Readonly<Partial<Record<PluginCaVariable, unknown>>>;

/**
 * The CA to serve over `values` (see the module comment); rejects only when reading or storing the
 * self-signed root failed, so a host may try again on its next call.
 */
export async function setupCaFromVariables(
  values: PluginCaValues,
  config: Config,
  deps: CaSetupDeps,
): Promise<CaService> {
  const names = Object.entries(pluginCaVariables) as [keyof PluginCaFiles, PluginCaVariable][];
  const textOf = (v: PluginCaVariable) => {
    const value = values[v];
    return typeof value === "string" && value !== "" ? value : undefined;
  };
  const all = names.map(([, v]) => v).join(", ");
  if (!names.some(([, v]) => textOf(v))) return setupCa(config, deps, {});
  const load = async () => {
    const missing = names.filter(([, v]) => !textOf(v)).map(([, v]) => v);
    if (missing.length > 0)
      throw new Error(`${missing.join(", ")} not set: a plug-in CA needs all of ${all}`);
    const files = {} as PluginCaFiles;
    for (const [file, v] of names) files[file] = textOf(v) ?? "";
    const loaded = await loadPluginCa(files, deps.now());
    if (loaded.ok) return loaded.bundle;
    // lib/ca names the file; here each file is a variable.
    const [file, v] = names.find(([f]) => loaded.error.startsWith(`${f}:`)) ?? [];
    throw new Error(file && v ? `${v}${loaded.error.slice(file.length)}` : loaded.error);
  };
  return setupCa(config, deps, { plugin: { where: all, load } }).catch((e: unknown): CaService => {
    const reason = `the plug-in CA: ${e instanceof Error ? e.message : e}`;
    logWarn(deps.log, `ca: IstioCertificateService is not served: ${reason}`);
    return { unavailable: `the certificate authority is not configured: ${reason}` };
  });
}
