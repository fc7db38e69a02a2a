/**
 * Gateway credentials in the store (keys.secret) and the SDS names a change of one touches, as
 * istiod's relatedConfigs: a Secret `<name>` is read by `kubernetes://<name>` and, for its CA,
 * `kubernetes://<name>-cacert`; by the Gateway API's `kubernetes-gateway://<ns>/<name>` likewise.
 */
import { keys } from "../../store/keys.ts";
import { listAll, type Store } from "../../store/store.ts";
import type { SecretMaterial } from "./secret.ts";

/** One cluster's Secret as stored: what it serves, never logged or shown by a debug page. */
export interface StoredSecret {
  cluster: string;
  namespace: string;
  name: string;
  resourceVersion: string;
  material: SecretMaterial;
  /** Content hash of `material`: an update with the same content pushes nothing. */
  hash: string;
}

/** istiod's suffix of a CA-only SDS name (credentials.SdsCaSuffix). */
export const caSuffix = "-cacert";

/** The namespace and name of a `Secret/<ns>/<name>` ConfigKey string, or undefined for another kind. */
export function secretOfConfigKey(key: string): { namespace: string; name: string } | undefined {
  if (!key.startsWith("Secret/")) return undefined;
  const [, namespace = "", ...rest] = key.split("/");
  return { namespace, name: rest.join("/") };
}

/**
 * The `view` of a Secret's changes: no namespace view has it (view keys never hold "~"), so
 * only gateway streams that look for it take them (lib/xds/gateway-secrets.ts).
 */
export function secretChangeView(namespace: string): string {
  return `~secret/${namespace}`;
}

/** The hash of a Secret's material: 16 hex digits of SHA-256 of its JSON. */
export async function materialHash(material: SecretMaterial): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(JSON.stringify(material)));
  return [...new Uint8Array(digest, 0, 8)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The SDS names a change of Secret `<ns>/<name>` may change, each once. */
export function namesOfSecret(namespace: string, name: string): string[] {
  const base = name.endsWith(caSuffix) ? [name] : [name, `${name}${caSuffix}`];
  return base.flatMap((n) => [`kubernetes://${n}`, `kubernetes-gateway://${namespace}/${n}`]);
}

/**
 * The Secret `<ns>/<name>` of `cluster`, or, with no cluster given, of the first cluster (in key
 * order) that holds it: a gateway whose node names no CLUSTER_ID reads the one it finds.
 */
export async function findSecret(
  store: Store,
  namespace: string,
  name: string,
  cluster?: string,
): Promise<StoredSecret | undefined> {
  if (cluster !== undefined)
    return (await store.get<StoredSecret>(keys.secret(cluster, namespace, name)))?.value;
  for (const e of await listAll<StoredSecret>(store, keys.secrets()))
    if (e.value.namespace === namespace && e.value.name === name) return e.value;
  return undefined;
}
