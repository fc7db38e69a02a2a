/**
 * Command-line flags over environment variables, one parser for every subcommand (relay, agent):
 * `--name value`, `--name=value`, and for boolean flags `--name` / `--no-name`. Each flag sets the
 * variable it stands for; the caller reads flags first, then the environment, then its defaults.
 */

/** One flag: its name without `--` ("" for an environment-only setting) and the variable it sets. */
export interface FlagSpec {
  flag: string;
  env: string;
  /** Boolean flags take no value (`--name` is true, `--no-name` false). */
  bool?: boolean;
}

/** A flag given on the command line: its value and the flag as written (`--name`). */
export interface GivenFlag {
  value: string;
  flag: string;
}

/** `help` when asked for; otherwise the flags given (by variable) and every problem found. */
export type FlagsResult = { help: true } | { help: false; flags: Map<string, GivenFlag>; errors: string[] };

/**
 * Parses `argv` against `specs`. `unknown(arg)` words the error of an argument no spec names (the
 * caller decides how to quote it and where --help is).
 */
export function parseFlags(
  argv: readonly string[],
  specs: readonly FlagSpec[],
  unknown: (arg: string) => string,
): FlagsResult {
  const errors: string[] = [];
  const flags = new Map<string, GivenFlag>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--help" || arg === "-h") return { help: true };
    const m = /^--(no-)?([a-z-]+)(?:=(.*))?$/.exec(arg);
    const spec = m && specs.find((s) => s.flag !== "" && s.flag === m[2]);
    if (!m || !spec) {
      errors.push(unknown(arg));
      continue;
    }
    if (spec.bool && m[3] === undefined) {
      flags.set(spec.env, { value: m[1] ? "false" : "true", flag: arg });
      continue;
    }
    const value = m[3] ?? argv[++i];
    if (m[1] || value === undefined) {
      errors.push(`${arg}: ${m[1] ? "only boolean flags take --no-" : "needs a value"}`);
      continue;
    }
    flags.set(spec.env, { value, flag: `--${spec.flag}` });
  }
  return { help: false, flags, errors };
}
