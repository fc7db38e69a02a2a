/**
 * The bridge from today's `log: (line: string) => void` to the structured logger: a line's prefix
 * gives its scope (lib/log/scopes.ts), its level is info unless the call site says otherwise
 * through logAt/logWarn/logError (or the line starts `<prefix>: WARNING:` / `ERROR:`). A plain
 * function (a test's array) still gets the bare line.
 */
import type { LogFields } from "./format.ts";
import type { Level } from "./levels.ts";
import { levelWord, scopeOf } from "./scopes.ts";

/** What every component takes: one line of text with its scope prefix (`xds: …`). */
export type LogLine = (line: string) => void;

/** A LogLine that also takes a level and fields (what createLineLog returns). */
export interface LineLog extends LogLine {
  at(level: Level, line: string, fields?: LogFields): void;
}

/** Where the adapter writes: the logger's write (an interface, so no import cycle). */
interface Writer {
  write(level: Level, scope: string, msg: string, fields?: LogFields): void;
}

/** The adapter over `logger`: `log(line)` is info; `log.at(level, line, fields)` says more. */
export function createLineLog(logger: Writer): LineLog {
  const at = (level: Level, line: string, fields?: LogFields) =>
    logger.write(level, scopeOf(line), line, fields);
  // A plain line is info, unless it names its level (`relay: ERROR: …`).
  return Object.assign((line: string) => at(levelWord(line) ?? "info", line), { at });
}

/**
 * Logs `line` at `level` with `fields` when `log` is a LineLog; any other `(line) => void` gets the
 * line alone (the fields only repeat what the line says). Call sites keep their plain `log` type.
 */
export function logAt(log: LogLine, level: Level, line: string, fields?: LogFields): void {
  const at = (log as Partial<LineLog>).at;
  if (typeof at === "function") at(level, line, fields);
  else log(line);
}

/** A failure, refusal or NACK the system survives: logAt(log, "warn", …). */
export function logWarn(log: LogLine, line: string, fields?: LogFields): void {
  logAt(log, "warn", line, fields);
}

/** Something could not be done or written (state may be lost): logAt(log, "error", …). */
export function logError(log: LogLine, line: string, fields?: LogFields): void {
  logAt(log, "error", line, fields);
}

/** Detail for debugging (per-event lines): logAt(log, "debug", …). */
export function logDebug(log: LogLine, line: string, fields?: LogFields): void {
  logAt(log, "debug", line, fields);
}
