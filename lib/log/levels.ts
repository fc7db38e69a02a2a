/**
 * Log levels and LOG_LEVEL, read as istiod's --log_output_level: `scope:level` pairs separated by
 * commas, and a bare level (or `all:level`) for every scope not named.
 */
import { logScopes } from "./scopes.ts";

/** The level of one entry, least to most severe. */
export type Level = "debug" | "info" | "warn" | "error";

/** What a scope lets through: a level and the ones above it, or nothing (`none`). */
export type Threshold = Level | "none";

/** Every level, least severe first (the order thresholds compare in). */
export const levels: readonly Level[] = ["debug", "info", "warn", "error"];

const rank: Record<Threshold, number> = { debug: 0, info: 1, warn: 2, error: 3, none: 4 };

/** The threshold of each scope: one default, and the scopes LOG_LEVEL names. */
export interface LogLevels {
  default: Threshold;
  scopes: Readonly<Record<string, Threshold>>;
}

/** istiod's default: info for every scope. */
export const defaultLogLevels: LogLevels = { default: "info", scopes: {} };

/** True when an entry of `level` in `scope` is written under `levels`. */
export function levelEnabled(levels: LogLevels, scope: string, level: Level): boolean {
  const threshold = Object.hasOwn(levels.scopes, scope) ? levels.scopes[scope] : levels.default;
  return rank[level] >= rank[threshold ?? levels.default];
}

const thresholds = [...levels, "none"] as const;

function isThreshold(s: string): s is Threshold {
  return (thresholds as readonly string[]).includes(s);
}

/**
 * Parses LOG_LEVEL (`info`, `ads:debug,push:warn`, `warn,ads:debug`). An unknown scope, an unknown
 * level, an empty part or a scope named twice is refused with the part that was wrong, so a typo
 * does not silently leave a scope at its default.
 */
export function parseLogLevels(raw: string): { ok: true; levels: LogLevels } | { ok: false; error: string } {
  const scopes: Record<string, Threshold> = {};
  let fallback: Threshold | undefined;
  const known = `${[...logScopes].join(", ")}, or all`;
  for (const part of raw.split(",")) {
    const item = part.trim();
    if (item === "") return { ok: false, error: `an empty part in ${JSON.stringify(raw)}` };
    const colon = item.indexOf(":");
    const scope = colon < 0 ? "all" : item.slice(0, colon).trim();
    const level = (colon < 0 ? item : item.slice(colon + 1)).trim().toLowerCase();
    if (!isThreshold(level))
      return { ok: false, error: `${JSON.stringify(item)}: not a level (${thresholds.join(", ")})` };
    if (scope === "all") {
      if (fallback !== undefined)
        return { ok: false, error: `${JSON.stringify(item)}: the default level is given twice` };
      fallback = level;
      continue;
    }
    if (!logScopes.has(scope)) return { ok: false, error: `${JSON.stringify(item)}: not a scope (${known})` };
    if (Object.hasOwn(scopes, scope))
      return { ok: false, error: `${JSON.stringify(item)}: scope ${scope} is given twice` };
    scopes[scope] = level;
  }
  return { ok: true, levels: { default: fallback ?? defaultLogLevels.default, scopes } };
}
