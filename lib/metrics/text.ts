/**
 * The lexical rules of the Prometheus text exposition format 0.0.4
 * (prometheus/docs content/docs/instrumenting/exposition_formats.md): names, escaping, numbers.
 */

/** A metric name: `[a-zA-Z_:][a-zA-Z0-9_:]*`. */
export const metricNamePattern = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/** A label name: `[a-zA-Z_][a-zA-Z0-9_]*` (names starting `__` are reserved). */
export const labelNamePattern = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** A label value inside double quotes: backslash, double quote and line feed escaped. */
export function escapeLabelValue(value: string): string {
  if (!/[\\"\n]/.test(value)) return value;
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

/** A HELP docstring: backslash and line feed escaped (a double quote stays). */
export function escapeHelp(help: string): string {
  if (!/[\\\n]/.test(help)) return help;
  return help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

/** A sample value as Go's ParseFloat reads it: `+Inf`, `-Inf`, `NaN`, or the shortest decimal. */
export function formatValue(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Number.POSITIVE_INFINITY) return "+Inf";
  if (v === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(v);
}
