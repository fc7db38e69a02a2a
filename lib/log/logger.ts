/**
 * The logger: entries with a time, a level, a scope and fields, dropped below their scope's
 * threshold (LOG_LEVEL), rendered in LOG_FORMAT and handed to the host's writer (stdout on Node,
 * console on the Worker). Pure apart from `out` and `now`, so tests inject both.
 */
import { formatEntry, type LogFields, type LogFormat } from "./format.ts";
import { type Level, type LogLevels, levelEnabled } from "./levels.ts";
import { createLineLog, type LineLog } from "./line-log.ts";

/** LOG_FORMAT and LOG_LEVEL, parsed (lib/log/config.ts). */
export interface LogConfig {
  format: LogFormat;
  levels: LogLevels;
}

export interface LoggerOptions extends LogConfig {
  /** The clock of the timestamps (ms since the epoch). */
  now: () => number;
  /** Writes one rendered line (no newline); `level` lets a host pick its stream or console method. */
  out: (line: string, level: Level) => void;
}

/** A structured logger, and the `(line) => void` adapter every component takes today. */
export interface Logger {
  /** True when an entry of `level` in `scope` would be written (skip building costly fields). */
  enabled(scope: string, level: Level): boolean;
  /** Writes one entry, unless its scope's threshold drops it. */
  write(level: Level, scope: string, msg: string, fields?: LogFields): void;
  /** The adapter: scope from the line's prefix, info unless said otherwise (lib/log/line-log.ts). */
  readonly line: LineLog;
}

/** Creates a logger writing through `options.out`. */
export function createLogger(options: LoggerOptions): Logger {
  const { format, levels, now, out } = options;
  const write: Logger["write"] = (level, scope, msg, fields) => {
    if (!levelEnabled(levels, scope, level)) return;
    out(formatEntry({ time: now(), level, scope, msg, fields }, format), level);
  };
  return {
    enabled: (scope, level) => levelEnabled(levels, scope, level),
    write,
    line: createLineLog({ write }),
  };
}
