/**
 * The Worker's logger: LOG_FORMAT / LOG_LEVEL lines through the console method of their level, so
 * Workers Logs records the level, and with LOG_FORMAT=json indexes each line's fields.
 */
import type { Level } from "../../lib/log/levels.ts";
import type { LineLog } from "../../lib/log/line-log.ts";
import { createLogger, type LogConfig } from "../../lib/log/logger.ts";

const method: Record<Level, "debug" | "log" | "warn" | "error"> = {
  debug: "debug",
  info: "log",
  warn: "warn",
  error: "error",
};

/** The `(line) => void` of every Worker and MeshStore component, over `config` (Config.log). */
export function workerLog(config: LogConfig): LineLog {
  return createLogger({ ...config, now: Date.now, out: (line, level) => console[method[level]](line) }).line;
}
