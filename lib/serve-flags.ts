/**
 * `edgepilot serve`'s flags and --help. Every setting of the control plane is an environment
 * variable (lib/config.ts, README "Configuration"); the few an operator sets per run have a flag too,
 * parsed by lib/cli-flags.ts like the relay's and the agent's, so `serve --help` answers without
 * starting anything and a mistyped flag is refused instead of ignored.
 */
import { type FlagSpec, parseFlags } from "./cli-flags.ts";

/** The flags `serve` takes, each standing for the variable lib/config.ts reads. */
export const serveFlags: readonly (FlagSpec & { help: string; fallback: string })[] = [
  { flag: "port", env: "PORT", help: "HTTP/1.1: ingest, /ready, REST", fallback: "8080" },
  {
    flag: "xds-port",
    env: "XDS_PORT",
    help: "cleartext HTTP/2: gRPC ADS, Connect, gRPC-Web",
    fallback: "15010",
  },
  {
    flag: "host",
    env: "HOST",
    help: "address both ports bind",
    fallback: "127.0.0.1 without a token, else 0.0.0.0",
  },
  {
    flag: "cluster",
    env: "CLUSTER_ID",
    help: "the cluster a call names when it names none",
    fallback: "Kubernetes",
  },
  {
    flag: "store",
    env: "EDGEPILOT_STORE",
    help: "memory, file (EDGEPILOT_DATA_DIR) or dynamodb (DYNAMODB_TABLE)",
    fallback: "memory",
  },
  { flag: "data-dir", env: "EDGEPILOT_DATA_DIR", help: "the file store's directory", fallback: "unset" },
];

/** `help`, or the environment with the given flags laid over it (flags win), or every problem found. */
export function parseServeArgs(
  env: Readonly<Record<string, string | undefined>>,
  argv: readonly string[],
): { ok: "help" } | { ok: true; env: Record<string, string | undefined> } | { ok: false; errors: string[] } {
  const parsed = parseFlags(
    argv,
    serveFlags,
    (arg) => `${JSON.stringify(arg)}: unknown argument (see --help)`,
  );
  if (parsed.help) return { ok: "help" };
  if (parsed.errors.length > 0) return { ok: false, errors: parsed.errors };
  const merged: Record<string, string | undefined> = { ...env };
  for (const [name, given] of parsed.flags) merged[name] = given.value;
  return { ok: true, env: merged };
}

/** The --help text: the flags with their variables and defaults, and where the rest is documented. */
export function serveUsage(): string {
  return [
    "usage: edgepilot serve [flags]",
    "",
    "The control plane: ingest (Kubernetes events) on PORT, xDS (gRPC ADS, Connect) on XDS_PORT.",
    "Every setting is an environment variable; these also have a flag (a flag wins):",
    "",
    ...serveFlags.map(
      (s) => `  ${`--${s.flag} <v>`.padEnd(18)}${s.env.padEnd(20)}${s.help} (default ${s.fallback})`,
    ),
    "",
    "EDGEPILOT_TOKEN (ingest), XDS_AUTH and the rest (debounce, limits, auth, registry): docs/reference/configuration.md.",
  ].join("\n");
}
