/**
 * The scopes of edgepilot's log, named after istiod's where istiod has one, and how the prefix of
 * a `(line) => void` line maps to its scope (docs/reference/debug-and-observability.md, "Logs", has the table).
 */

/** Line prefix (the word before the first ": ") ▶ scope. A line with none of them is `default`. */
export const scopeOfPrefix: Readonly<Record<string, string>> = {
  xds: "ads",
  ads: "ads",
  push: "push",
  debounce: "push",
  views: "push",
  ingest: "ingest",
  sync: "ingest",
  auth: "security",
  relay: "relay",
  agent: "agent",
  core: "default",
  edgepilot: "default",
};

/** Every scope a line can land in: what LOG_LEVEL may name. */
export const logScopes: ReadonlySet<string> = new Set([...Object.values(scopeOfPrefix), "default"]);

/**
 * The scope of `line` from its first word: `xds: could not…` ▶ ads, `push 12: full…` ▶ push; a line
 * whose first word is no known prefix is in `default`. The line itself stays the message, prefix
 * and all, so what operators and tests grep for (`relay: config: …`) reads the same in every format.
 */
export function scopeOf(line: string): string {
  const word = /^([a-z]{2,12})[: ]/.exec(line)?.[1];
  return word !== undefined && Object.hasOwn(scopeOfPrefix, word)
    ? (scopeOfPrefix[word] as string)
    : "default";
}

/**
 * The level a line names itself after its prefix (`relay: ERROR: …` ▶ error, `edgepilot: WARNING:
 * …` ▶ warn), the convention some lines used before levels existed; undefined for the others.
 */
export function levelWord(line: string): "warn" | "error" | undefined {
  const word = /^[a-z]{2,12}: (WARNING|ERROR): /.exec(line)?.[1];
  return word === "ERROR" ? "error" : word === "WARNING" ? "warn" : undefined;
}
