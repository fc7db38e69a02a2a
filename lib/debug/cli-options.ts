/**
 * `edgepilot proxy-status`'s flags and environment, parsed purely (lib/cli-flags.ts): where the
 * control plane is, the XDS_AUTH token to present, and the optional proxy to diff.
 */
import { type FlagSpec, parseFlags } from "../cli-flags.ts";

/** What proxy-status runs with. */
export interface ProxyStatusOptions {
  /** Base URL of the control plane's PORT (or the Worker). */
  url: string;
  /** A token file to read (re-read on every run), or the token itself. */
  tokenFile?: string;
  token?: string;
  /** One proxy (node id): print its diff instead of the table. */
  proxyID?: string;
}

const specs: FlagSpec[] = [
  { flag: "url", env: "EDGEPILOT_URL" },
  { flag: "token-file", env: "EDGEPILOT_XDS_TOKEN_FILE" },
  { flag: "", env: "EDGEPILOT_XDS_TOKEN" },
];

/** The --help text. */
export function proxyStatusUsage(): string {
  return [
    "usage: edgepilot proxy-status [--url <base>] [--token-file <path>] [proxyID]",
    "",
    "Prints the xDS sync status of every proxy connected to the control plane (as istioctl",
    "proxy-status does): NAME, CLUSTER, CDS, LDS, EDS, RDS, ISTIOD, VERSION, each type SYNCED,",
    "NOT SENT, NACKED or STALE. With a proxyID (a node id), compares what that proxy was sent",
    "with what is published now, type by type.",
    "",
    "  --url <base>         the control plane's PORT or the Worker (EDGEPILOT_URL; default http://127.0.0.1:8080)",
    "  --token-file <path>  a file holding the XDS_AUTH bearer token (EDGEPILOT_XDS_TOKEN_FILE)",
    "  EDGEPILOT_XDS_TOKEN  the token itself, when no file is given",
    "",
    "Reads GET /debug/syncz (every page) and, with a proxyID, GET /debug/config_dump?proxyID=.",
  ].join("\n");
}

/** The options, `help`, or every problem found (each naming its flag). */
export function parseProxyStatusArgs(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): { ok: true; options: ProxyStatusOptions } | { ok: "help" } | { ok: false; errors: string[] } {
  const positional: string[] = [];
  const result = parseFlags(argv, specs, (arg) => {
    if (!arg.startsWith("-")) {
      positional.push(arg);
      return "";
    }
    return `unknown flag ${JSON.stringify(arg)} (see --help)`;
  });
  if (result.help) return { ok: "help" };
  const errors = result.errors.filter((e) => e !== "");
  if (positional.length > 1) errors.push(`one proxyID at most, got ${positional.length}`);
  const get = (name: string) => result.flags.get(name)?.value ?? env[name];
  const url = get("EDGEPILOT_URL") ?? "http://127.0.0.1:8080";
  if (!/^https?:\/\/[^/]/.test(url))
    errors.push(`--url must be an http:// or https:// URL, got ${JSON.stringify(url)}`);
  if (errors.length > 0) return { ok: false, errors };
  const tokenFile = get("EDGEPILOT_XDS_TOKEN_FILE");
  const token = env.EDGEPILOT_XDS_TOKEN;
  return {
    ok: true,
    options: {
      url: url.replace(/\/+$/, ""),
      ...(tokenFile !== undefined && tokenFile !== "" && { tokenFile }),
      ...(token !== undefined && token !== "" && { token }),
      ...(positional[0] !== undefined && { proxyID: positional[0] }),
    },
  };
}
