/**
 * What a Delta session answers for one type, decided from a diff (delta-diff.ts) and the stream's
 * state, pure and synchronous, so a push answered from its change feed at once (delta.ts, no
 * promise) and one that had to read the store decide alike: what to send, what to remove, the sync gate,
 * and the make-before-break order of a push's answer.
 */
import { logSafe } from "../log-safe.ts";
import type { ResourceChange } from "../resources/changes.ts";
import type { StoredResource } from "../resources/types.ts";
import { pushOrder, removalOrder } from "../resources/xds-types.ts";
import { deltaResourceBytes, fitsOneDeltaResponse, oversized, planDeltaPieces, shortType } from "./budget.ts";
import { changedNow } from "./change-source.ts";
import { type DeltaDiff, diffCurrent } from "./delta-diff.ts";
import type { DeltaTypeState } from "./delta-state.ts";
import { inReach } from "./subscription.ts";

/** One type's answer: resources to send, names to remove (sorted). */
export interface TypeDiff {
  state: DeltaTypeState;
  resources: readonly StoredResource[];
  removed: readonly string[];
}

/** One part of an answer for one type: planned into responses under the budget (planDeltaPieces). */
export type Part = TypeDiff;

/**
 * What to send and remove for one type, before the sync gate (see gated); consumes the names the
 * client must hear about again. `d` is the diff of some names (`partial`: a push's changes in reach
 * and the resend names) or of the whole subscription, against what the client holds.
 */
export function typeDiff(state: DeltaTypeState, partial: boolean, d: DeltaDiff): TypeDiff {
  // No NACKed version and nothing to resend (the usual push): the diff's resources as they are.
  const resources =
    state.resend.size === 0 && state.rejected.size === 0
      ? d.resources
      : d.resources.filter((r) => state.resend.has(r.name) || state.rejected.get(r.name) !== r.version);
  // Nothing missing and nothing to resend: the diff's removals (sorted) are the answer's.
  if (d.missing.length === 0 && state.resend.size === 0) return { state, resources, removed: d.removed };
  const sending = new Set(resources.map((r) => r.name));
  const removed = new Set(d.removed);
  // A subscribed name that does not exist is reported once; asked for again, it is reported again.
  // Only explicitly subscribed names are reported missing (a push's names may be wildcard-reached).
  for (const name of d.missing)
    if (!state.reportedMissing.has(name) && (!partial || state.names.has(name))) removed.add(name);
  for (const name of state.resend) if (!sending.has(name)) removed.add(name);
  state.resend.clear();
  return { state, resources, removed: [...removed].sort() };
}

/**
 * The answer of `state` to the changed names it reaches (`named`, sorted), from a push alone (the
 * change feed carries their versions and bytes), before the sync gate: undefined when a name needs
 * the store. The per-stream diff of a push delta.ts answers at once, and a class's answer
 * (delta-shared.ts) alike.
 */
export function answerNamed(
  state: DeltaTypeState,
  changed: ReadonlyMap<string, ResourceChange> | undefined,
  named: string[],
): TypeDiff | undefined {
  const current = changedNow(changed, named);
  return current && typeDiff(state, true, diffCurrent(current, named, false, state.returned));
}

/** The names of `changed` (a push's changes of the state's type) in the subscription's reach, sorted. */
export function changedInReach(
  state: DeltaTypeState,
  changed: ReadonlyMap<string, unknown> | undefined,
): string[] {
  const named: string[] = [];
  if (changed === undefined) return named;
  for (const name of changed.keys()) if (inReach(state, name)) named.push(name);
  return named.length > 1 ? named.sort() : named;
}

/**
 * Per type of `states` in push order (only `typeUrls` when given), the names a push (`index`: its
 * changes per type URL) makes it look at: its changes in reach, and the names to resend.
 */
export function pushReach(
  states: ReadonlyMap<string, DeltaTypeState>,
  index: ReadonlyMap<string, ReadonlyMap<string, unknown>>,
  typeUrls?: readonly string[],
): { state: DeltaTypeState; only: Set<string> }[] {
  const out: { state: DeltaTypeState; only: Set<string> }[] = [];
  for (const typeUrl of pushOrder) {
    if (typeUrls && !typeUrls.includes(typeUrl)) continue;
    const state = states.get(typeUrl);
    if (!state) continue;
    // No set when the push misses this type.
    let only = state.resend.size > 0 ? new Set(state.resend) : undefined;
    for (const name of index.get(typeUrl)?.keys() ?? []) {
      if (!inReach(state, name)) continue;
      only ??= new Set();
      only.add(name);
    }
    if (only !== undefined) out.push({ state, only });
  }
  return out;
}

/**
 * Not synced yet (`open` false): nothing goes in removed_resources. What the client holds stays in
 * its view, so the first push after sync removes it; a subscribed name that does not exist is not
 * reported (an unsynced registry may just not hold it yet) and stays unreported, so the re-read
 * when the gate opens reports it, or sends it if it appeared meanwhile.
 */
export function gated(d: TypeDiff, open: boolean): TypeDiff {
  if (open || d.removed.length === 0) return d;
  return { ...d, removed: [] };
}

/** A push's answer in make-before-break order: every addition and update of every type before any removal. */
export function pushParts(diffs: readonly TypeDiff[]): Part[] {
  const out: Part[] = [];
  for (const d of diffs)
    if (d.resources.length > 0)
      out.push(d.removed.length === 0 ? d : { state: d.state, resources: d.resources, removed: [] });
  for (const typeUrl of removalOrder) {
    const d = diffs.find((x) => x.state.typeUrl === typeUrl);
    if (d && d.removed.length > 0) out.push({ state: d.state, resources: [], removed: d.removed });
  }
  return out;
}

/**
 * The parts cut into pieces under `budget` (planDeltaPieces), in order; the parts themselves when
 * each fits one response (the usual case: nothing copied). A resource over the budget alone is
 * sent alone, with a log line naming it and the limit.
 */
export function partsUnderBudget(
  parts: readonly Part[],
  budget: number,
  log: ((line: string) => void) | undefined,
): readonly Part[] {
  let fit = true;
  for (const p of parts) if (!fitsOneDeltaResponse(p.resources, p.removed, budget)) fit = false;
  if (fit) return parts;
  const pieces: Part[] = [];
  for (const { state, resources, removed } of parts) {
    for (const r of oversized(resources, deltaResourceBytes, budget))
      log?.(
        `xds: delta ${shortType(r.typeUrl)} ${logSafe(r.name)} is ${deltaResourceBytes(r)} bytes, over ` +
          `EDGEPILOT_MAX_RESPONSE_BYTES=${budget}; sent alone in its own response`,
      );
    for (const piece of planDeltaPieces(resources, removed, budget))
      pieces.push({ state, resources: piece.resources, removed: piece.removed });
  }
  return pieces;
}
