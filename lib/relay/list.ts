/** Kubernetes lists and watch events as the relay handles them: paged lists merged, resourceVersions read. */

/** A Kubernetes List as the API server returns it; items are passed on untouched. */
export interface KubeList {
  apiVersion?: string;
  kind?: string;
  metadata: {
    resourceVersion?: string;
    continue?: string;
    remainingItemCount?: number;
    [k: string]: unknown;
  };
  items: unknown[];
  [k: string]: unknown;
}

/** A watch event as the API server streams it. */
export interface WatchEvent {
  type: string;
  object: unknown;
}

/** Checks that a page is a List (an object with metadata and an items array); names what is wrong. */
export function asListPage(page: unknown): { ok: true; list: KubeList } | { ok: false; error: string } {
  if (typeof page !== "object" || page === null || Array.isArray(page)) {
    return { ok: false, error: "list response is not a JSON object" };
  }
  const p = page as Partial<KubeList>;
  if (!Array.isArray(p.items)) return { ok: false, error: "list response has no items array" };
  if (p.metadata !== undefined && (typeof p.metadata !== "object" || p.metadata === null)) {
    return { ok: false, error: "list response metadata is not an object" };
  }
  return { ok: true, list: { ...p, metadata: p.metadata ?? {}, items: p.items } as KubeList };
}

/**
 * Joins the pages of one paged list (limit/continue) into the complete list the API server would have
 * returned unpaged: the first page's apiVersion, kind and resourceVersion (every page of one list is
 * served from the same snapshot), all items in order, no continue token.
 */
export function mergePages(pages: readonly KubeList[]): KubeList {
  const first = pages[0];
  if (first === undefined) throw new Error("mergePages: no pages");
  const { continue: _c, remainingItemCount: _r, ...metadata } = first.metadata;
  return { ...first, metadata, items: pages.flatMap((p) => p.items) };
}

/** The object's metadata.resourceVersion, if it has one. */
export function objectResourceVersion(object: unknown): string | undefined {
  const rv = (object as { metadata?: { resourceVersion?: unknown } } | null)?.metadata?.resourceVersion;
  return typeof rv === "string" && rv !== "" ? rv : undefined;
}

/** The HTTP-like code of a watch ERROR event's Status object (410 when the resourceVersion expired). */
export function statusCode(object: unknown): number | undefined {
  const code = (object as { code?: unknown } | null)?.code;
  return typeof code === "number" ? code : undefined;
}

/** A one-line description of a Status object for logs: "410 Expired: too old resource version". */
export function describeStatus(object: unknown): string {
  const s = (object ?? {}) as { code?: unknown; reason?: unknown; message?: unknown };
  return [s.code, s.reason, s.message].filter((x) => x !== undefined && x !== "").join(" ") || "no status";
}
