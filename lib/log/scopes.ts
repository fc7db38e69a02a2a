/**
 * The scopes of edgepilot's log, named after istiod's where istiod has one, and how the prefix of
 * a `(line) => void` line maps to its scope (README "Logs" has the table).
 */

/** Line prefix (the word before the first ": ") ▶ scope. A line with none of them is `default`. */
export const scopeOfPrefix: Readonly<Record<string, string>> = {
  xds: "ads",
  ads: "ads",
  push: "push",
  debounce: "push",
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

/** A line split into its scope and the message after its prefix. */
export interface ScopedLine {
  scope: string;
  msg: string;
}

/**
 * The scope of `line` from its first word: `xds: could not…` ▶ ads, message `could not…` (the
 * prefix is the scope column now); `push 12: full…` ▶ push, kept whole (the word belongs to the
 * message). A line whose first word is no known prefix is kept whole in `default`.
 */
export function scopeLine(line: string): ScopedLine {
  const word = /^([a-z]{2,12})(: | )/.exec(line);
  if (word && Object.hasOwn(scopeOfPrefix, word[1] as string)) {
    const scope = scopeOfPrefix[word[1] as string] as string;
    return { scope, msg: word[2] === ": " ? line.slice(word[0].length) : line };
  }
  return { scope: "default", msg: line };
}
