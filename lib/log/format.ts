/**
 * The two shapes of a log entry: istiod's text (`time\tlevel\tscope\tmessage key=value`) and one
 * JSON object per line (LOG_FORMAT=json). Either way one entry is exactly one line, whatever the
 * message or a field holds: control characters are escaped and outside text is clipped.
 */
import { clipLogged, logSafe } from "../log-safe.ts";
import type { Level } from "./levels.ts";

/** A field's value: plain data only, so both formats render it the same way. */
export type LogValue = string | number | boolean;

/** Structured fields of an entry (node id, version, counts…), in the order given. */
export type LogFields = Readonly<Record<string, LogValue>>;

/** LOG_FORMAT: istiod's text lines (the default) or JSON lines. */
export type LogFormat = "text" | "json";

/** One entry: when (ms since the epoch), how severe, which scope, what, and its fields. */
export interface LogEntry {
  time: number;
  level: Level;
  scope: string;
  msg: string;
  fields?: LogFields | undefined;
}

/** RFC 3339 in UTC with milliseconds (2026-11-23T17:00:00.000Z), as istiod's timestamps. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString();
}

/** Renders `entry` in `format`: one line, no trailing newline. */
export function formatEntry(entry: LogEntry, format: LogFormat): string {
  return format === "json" ? formatJson(entry) : formatText(entry);
}

// C0 controls, DEL, C1 controls and the two Unicode line separators: each would split or forge a line.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is escaped
const unsafe = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const escapeChar = (c: string): string => {
  const named: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };
  return named[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
};

/** A text field value: bare when it is a plain token, else quoted and escaped as logSafe does. */
function textValue(value: LogValue): string {
  if (typeof value !== "string") return String(value);
  return /^[A-Za-z0-9._:/@+,~-]{1,512}$/.test(value) ? value : logSafe(value);
}

/** `time\tlevel\tscope\tmessage key=value …`; the message's control characters are escaped. */
export function formatText(entry: LogEntry): string {
  let line = `${rfc3339(entry.time)}\t${entry.level}\t${entry.scope}\t${entry.msg.replace(unsafe, escapeChar)}`;
  if (entry.fields)
    for (const [k, v] of Object.entries(entry.fields))
      line += ` ${k.replace(/[^\w.-]/g, "_")}=${textValue(v)}`;
  return line;
}

/** `{"time","level","scope","msg","fields"}`: valid JSON whatever a string holds (lone surrogates too). */
export function formatJson(entry: LogEntry): string {
  const out: Record<string, unknown> = {
    time: rfc3339(entry.time),
    level: entry.level,
    scope: entry.scope,
    msg: entry.msg,
  };
  if (entry.fields && Object.keys(entry.fields).length > 0) {
    const fields: Record<string, LogValue> = {};
    for (const [k, v] of Object.entries(entry.fields)) fields[k] = typeof v === "string" ? clipLogged(v) : v;
    out.fields = fields;
  }
  // JSON.stringify escapes controls and lone surrogates; U+2028/2029 are escaped for line readers.
  return JSON.stringify(out).replace(/[\u2028\u2029]/g, (c) => (c === "\u2028" ? "\\u2028" : "\\u2029"));
}
