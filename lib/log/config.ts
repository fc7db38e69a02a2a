/** LOG_FORMAT and LOG_LEVEL from the environment, for the control plane, the relay and the agent alike. */
import type { LogFormat } from "./format.ts";
import { defaultLogLevels, parseLogLevels } from "./levels.ts";
import type { LogConfig } from "./logger.ts";

/** The --help paragraph of the relay and the agent on the two variables (environment only). */
export const logUsage =
  "Logs: LOG_FORMAT=text|json (default text), LOG_LEVEL=<level> or <scope>:<level>,... as istiod's\n" +
  "--log_output_level (levels debug, info, warn, error, none; e.g. info,ads:debug). See docs/reference/debug-and-observability.md (Logs).";

/** Text lines and info for every scope: what an unset environment gets. */
export const defaultLogConfig: LogConfig = { format: "text", levels: defaultLogLevels };

/**
 * Reads LOG_FORMAT (`text` or `json`) and LOG_LEVEL (istiod's --log_output_level syntax); each
 * problem is pushed to `errors` naming the variable and the bad part, and the default is kept.
 */
export function parseLogConfig(env: Record<string, string | undefined>, errors: string[]): LogConfig {
  let format: LogFormat = defaultLogConfig.format;
  const rawFormat = env.LOG_FORMAT;
  if (rawFormat !== undefined && rawFormat !== "") {
    const f = rawFormat.trim().toLowerCase();
    if (f === "text" || f === "json") format = f;
    else errors.push(`LOG_FORMAT=${rawFormat}: not a log format (text or json)`);
  }
  let levels = defaultLogConfig.levels;
  const rawLevel = env.LOG_LEVEL;
  if (rawLevel !== undefined && rawLevel !== "") {
    const parsed = parseLogLevels(rawLevel);
    if (parsed.ok) levels = parsed.levels;
    else errors.push(`LOG_LEVEL=${rawLevel}: ${parsed.error}`);
  }
  return { format, levels };
}
