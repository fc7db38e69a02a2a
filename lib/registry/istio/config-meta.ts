/**
 * The identity and age of a networking config, as istiod orders configs (sortConfigByCreationTime):
 * oldest first, then by name, then by namespace, so every instance picks the same winner.
 */

/** What the normalized configs keep of their metadata. */
export interface ConfigMeta {
  name: string;
  namespace: string;
  /** metadata.creationTimestamp (RFC 3339); absent sorts as the oldest. */
  creationTimestamp?: string;
}

function created(m: ConfigMeta): number {
  const t = m.creationTimestamp ? Date.parse(m.creationTimestamp) : Number.NaN;
  return Number.isNaN(t) ? Number.NEGATIVE_INFINITY : t;
}

/** Istio's config order: creation time, then name, then namespace. */
export function byCreation(a: ConfigMeta, b: ConfigMeta): number {
  const ta = created(a);
  const tb = created(b);
  if (ta !== tb) return ta < tb ? -1 : 1;
  if (a.name !== b.name) return a.name < b.name ? -1 : 1;
  if (a.namespace !== b.namespace) return a.namespace < b.namespace ? -1 : 1;
  return 0;
}
