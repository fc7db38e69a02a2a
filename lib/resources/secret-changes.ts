/**
 * What a push naming Secrets changes: one change per SDS name of each (secret-store.ts
 * namesOfSecret), marked with the Secret's namespace so only gateway streams take it
 * (lib/xds/gateway-secrets.ts), with no body: each stream reads it through its own authorization.
 */
import {
  findSecret,
  namesOfSecret,
  secretChangeView,
  secretOfConfigKey,
} from "../registry/kube/secret-store.ts";
import type { Store } from "../store/store.ts";
import type { ResourceChange } from "./changes.ts";
import { TypeUrl } from "./xds-types.ts";

/** The SDS changes of the Secrets `configs` (ConfigKey strings) names; none for unknown scope or none named. */
export async function secretChanges(
  store: Store,
  configs: readonly string[] | null,
): Promise<ResourceChange[]> {
  const out: ResourceChange[] = [];
  for (const c of configs ?? []) {
    const ref = secretOfConfigKey(c);
    if (!ref) continue;
    const held = await findSecret(store, ref.namespace, ref.name);
    for (const name of namesOfSecret(ref.namespace, ref.name))
      out.push({
        typeUrl: TypeUrl.secret,
        name,
        version: held?.hash ?? null,
        view: secretChangeView(ref.namespace),
      });
  }
  return out;
}
