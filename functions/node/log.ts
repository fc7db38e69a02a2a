/**
 * The Node entries' logger (serve, relay, agent): LOG_FORMAT / LOG_LEVEL lines, errors on stderr
 * and the rest on stdout (what the entries did before, so pipes and probes see the same streams).
 */
import { defaultLogConfig, parseLogConfig } from "../../lib/log/config.ts";
import { createLogger, type LogConfig, type Logger } from "../../lib/log/logger.ts";

/** A logger writing one line per entry to stdout (stderr for errors), stamped with the wall clock. */
export function createNodeLogger(config: LogConfig = defaultLogConfig): Logger {
  return createLogger({
    ...config,
    now: Date.now,
    out: (line, level) => (level === "error" ? process.stderr : process.stdout).write(`${line}\n`),
  });
}

/**
 * The logger for the lines before the whole configuration is parsed (its own errors among them):
 * LOG_FORMAT and LOG_LEVEL alone when they parse, so even a config error comes out as JSON when
 * asked; the defaults otherwise.
 */
export function bootLogger(env: Record<string, string | undefined>): Logger {
  const errors: string[] = [];
  const config = parseLogConfig(env, errors);
  return createNodeLogger(errors.length > 0 ? defaultLogConfig : config);
}
