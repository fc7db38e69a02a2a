/**
 * Status conditions as istiod's gateway controller writes them (conditions.go setConditions): one
 * per type, sorted by type, a failed condition inverts its status and takes the error's reason and
 * message. lastTransitionTime is left out on purpose: the writer (the relay) fills it, keeping the
 * existing one when type, status, reason and message are unchanged, so an unchanged status
 * compares equal between pushes.
 */

/** One condition to set: its success reason and message, or the error that replaces them. */
export interface ConditionSpec {
  reason: string;
  message: string;
  /** The success status; "True" unless said (a listener's Conflicted succeeds as "False"). */
  status?: "True" | "False";
  error?: { reason: string; message: string };
}

/** A metav1.Condition without lastTransitionTime. */
export interface Condition {
  type: string;
  status: "True" | "False";
  reason: string;
  message: string;
  observedGeneration?: number;
}

/** The conditions of `specs`, sorted by type, as istiod sets them on an empty status. */
export function setConditions(
  generation: number | undefined,
  specs: Record<string, ConditionSpec>,
): Condition[] {
  return Object.keys(specs)
    .sort()
    .map((type) => {
      const c = specs[type] as ConditionSpec;
      const ok = c.status ?? "True";
      const status = c.error ? (ok === "True" ? "False" : "True") : ok;
      return {
        type,
        status,
        reason: c.error?.reason ?? c.reason,
        message: c.error?.message ?? c.message,
        ...(generation !== undefined && generation !== 0 && { observedGeneration: generation }),
      };
    });
}

/** Go's humanReadableJoin: `a`, `a and b`, `a, b, and c`. */
export function humanReadableJoin(items: readonly string[]): string {
  if (items.length <= 1) return items[0] ?? "";
  if (items.length === 2) return `${items[0]} and ${items[1]}`;
  return `${items.slice(0, -1).join(", ")}, and ${items[items.length - 1]}`;
}
