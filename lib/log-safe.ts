/**
 * Escaping for text that came from outside (node ids, NACK messages, object names, error details)
 * before it reaches a log line: one call, so a client can never forge a whole line or flood the log.
 */

/** The longest piece of outside text one log line carries; the rest is elided. */
export const maxLoggedChars = 512;

/**
 * `value` as a double-quoted JSON string: newlines, control characters, quotes and lone
 * surrogates escaped, truncated to `max` characters with the number of elided characters said.
 * Non-strings are stringified first.
 */
export function logSafe(value: unknown, max = maxLoggedChars): string {
  const cut = clipLogged(typeof value === "string" ? value : String(value), max);
  // JSON.stringify escapes control characters and lone surrogates; U+2028/2029 end lines for some readers.
  return JSON.stringify(cut).replace(/[\u2028\u2029]/g, (c) => (c === "\u2028" ? "\\u2028" : "\\u2029"));
}

/** `text` cut to `max` characters, saying how many were elided (logSafe's cut, for structured fields). */
export function clipLogged(text: string, max = maxLoggedChars): string {
  return text.length > max ? `${text.slice(0, max)}…(+${text.length - max} chars)` : text;
}
