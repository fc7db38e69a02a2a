/** v1 Namespace ─▶ NamespaceInfo: what discovery selectors match on. */
import { sortedRecord } from "./canonical.ts";
import type { NamespaceInfo } from "./records.ts";
import type { KubeNamespace } from "./types.ts";

/** A namespace's name and its labels, sorted by key. Pure. */
export function convertNamespace(obj: KubeNamespace): NamespaceInfo {
  return { name: obj.metadata.name, labels: sortedRecord(obj.metadata.labels) };
}
