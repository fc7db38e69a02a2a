/**
 * Mesh cores over one store on one manual clock, as the shared-store tests drive them (two Node
 * instances over one DynamoDB table): each core's feed announcements and log lines recorded, and the
 * debounce turns it was asked for counted.
 */
import { createMeshCore, type MeshCore } from "../../../lib/core/mesh-core.ts";
import { defaultRegistryOptions } from "../../../lib/ingest/context.ts";
import { validateEvents } from "../../../lib/ingest/index.ts";
import { defaultDebounceOptions } from "../../../lib/push/debounce.ts";
import type { ResourceChange } from "../../../lib/resources/changes.ts";
import type { Store } from "../../../lib/store/index.ts";
import type { ManualClock } from "../relay/manual-clock.ts";

/** A feed's announcement: its version (0: the gate opened) and `name@version` of each change, sorted. */
export const heardOf = (version: number, changes?: readonly ResourceChange[]) =>
  `${version}:${changes ? changes.map((c) => `${c.name}@${c.version}`).sort() : "all"}`;

/** One core and what it recorded. */
export interface Instance {
  core: MeshCore;
  heard: string[];
  lines: string[];
  turnsAsked: () => number;
}

/** A core over `store` named `name` (its instance ids), shared unless told, polling every 1 s. */
export function instance(
  store: Store,
  clock: ManualClock,
  name: string,
  options: { shared?: boolean; syncTimeoutMs?: number } = {},
): Instance {
  const lines: string[] = [];
  let turnsAsked = 0;
  let ids = 0;
  const core = createMeshCore({
    store,
    config: {
      debounce: defaultDebounceOptions,
      registry: defaultRegistryOptions,
      syncTimeoutMs: options.syncTimeoutMs ?? 60_000,
    },
    timers: clock,
    log: (line) => lines.push(line),
    requestTurn: () => {
      turnsAsked++;
    },
    newId: () => `${name}-${++ids}`,
    ...((options.shared ?? true) && { follow: { intervalMs: 1000 } }),
  });
  const heard: string[] = [];
  core.feed.subscribe(({ version, changes }) => heard.push(heardOf(version, changes)));
  return { core, heard, lines, turnsAsked: () => turnsAsked };
}

/** Validates `raw` watch events and applies them on `core` for cluster `east`. */
export function ingestEvents(core: MeshCore, raw: readonly unknown[]) {
  const v = validateEvents(raw);
  if (!v.ok) throw new Error(v.error.message);
  return core.ingest.events("east", v.value);
}
