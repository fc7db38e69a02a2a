/**
 * `edgepilot proxy-status [--url <base>] [--token-file <path>] [proxyID]`: the table istioctl
 * proxy-status prints, read from GET /debug/syncz (every page, following `link: rel="next"`), or
 * for one proxy the comparison of what it was sent with what is published (/debug/config_dump).
 * Formatting is lib/debug's; this file only fetches. Exit 0 on success, 1 when the control plane
 * refused or could not be reached (one line saying why), 2 for bad flags.
 */
import { readFile } from "node:fs/promises";
import { parseProxyStatusArgs, proxyStatusUsage } from "../../lib/debug/cli-options.ts";
import type { ConfigDump } from "../../lib/debug/config-dump.ts";
import { proxyDiff } from "../../lib/debug/proxy-diff.ts";
import { statusTable } from "../../lib/debug/status-table.ts";
import type { SyncStatus } from "../../lib/debug/syncz.ts";

/** Pages followed at most (each holds up to 1000 proxies). */
const maxPages = 1000;

/** Runs the command; resolves with the exit code. `out`/`err` take whole lines. */
export async function proxyStatus(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  out: (text: string) => void,
  err: (line: string) => void,
): Promise<number> {
  const parsed = parseProxyStatusArgs(argv, env);
  if (parsed.ok === "help") {
    out(`${proxyStatusUsage()}\n`);
    return 0;
  }
  if (!parsed.ok) {
    for (const e of parsed.errors) err(`proxy-status: ${e}`);
    return 2;
  }
  const { options } = parsed;
  let token = options.token;
  if (options.tokenFile !== undefined) {
    try {
      token = (await readFile(options.tokenFile, "utf8")).trim();
    } catch (e) {
      err(`proxy-status: cannot read --token-file ${options.tokenFile}: ${(e as Error).message}`);
      return 1;
    }
  }
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const get = async (path: string) => {
    const url = `${options.url}${path}`;
    let res: Response;
    try {
      res = await fetch(url, { headers });
    } catch (e) {
      throw new Error(
        `cannot reach ${url}: ${(e as Error & { cause?: Error }).cause?.message ?? (e as Error).message}`,
      );
    }
    const text = await res.text();
    if (!res.ok) {
      const message = safeError(text);
      const hint = res.status === 401 ? " (pass --token-file or set EDGEPILOT_XDS_TOKEN)" : "";
      throw new Error(`${url}: ${res.status} ${message}${hint}`);
    }
    return { res, body: JSON.parse(text) as unknown };
  };
  try {
    if (options.proxyID !== undefined) {
      const { body } = await get(`/debug/config_dump?proxyID=${encodeURIComponent(options.proxyID)}`);
      const dump = body as ConfigDump;
      out(proxyDiff(dump.edgepilot.proxy, dump.edgepilot.types));
      return 0;
    }
    const rows: SyncStatus[] = [];
    let path: string | undefined = "/debug/syncz?limit=1000";
    let instance = "";
    for (let n = 0; path !== undefined && n < maxPages; n++) {
      const { res, body } = await get(path);
      instance ||= res.headers.get("x-edgepilot-instance") ?? "";
      rows.push(...(body as SyncStatus[]));
      path = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get("link") ?? "")?.[1];
    }
    out(statusTable(rows, instance));
    return 0;
  } catch (e) {
    err(`proxy-status: ${(e as Error).message}`);
    return 1;
  }
}

/** The `error` of a JSON error body, else the body's start. */
function safeError(text: string): string {
  try {
    const e = (JSON.parse(text) as { error?: unknown }).error;
    if (typeof e === "string") return e;
  } catch {
    // not JSON: shown as text
  }
  return text.slice(0, 200);
}

const code = await proxyStatus(
  process.argv.slice(2),
  process.env,
  (text) => process.stdout.write(text),
  (line) => console.error(line),
);
process.exitCode = code;
