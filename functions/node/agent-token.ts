/**
 * The upstream token from a file, re-read when the file changes: fs.watch on its directory (a
 * projected service-account token is replaced by a symlink swap in its directory, which a watch on
 * the file itself would miss), no polling. The token is trimmed; an unreadable or empty file leaves
 * no token (the upstream then refuses, and the agent says which file to fix).
 */
import { type FSWatcher, readFileSync, watch } from "node:fs";
import { basename, dirname } from "node:path";
import { logWarn } from "../../lib/log/line-log.ts";
import { logSafe } from "../../lib/log-safe.ts";

/** The token as the file last held it. */
export interface TokenFile {
  current(): string | undefined;
  close(): void;
}

/** Reads `path` now and again whenever its directory changes; `changed` runs when the token did. */
export function watchTokenFile(path: string, changed: () => void, log: (line: string) => void): TokenFile {
  let token: string | undefined;
  let problem = "";
  const read = (): boolean => {
    let next: string | undefined;
    let why = "";
    try {
      next = readFileSync(path, "utf8").trim() || undefined;
      if (next === undefined) why = "it is empty";
    } catch (e) {
      why = (e as NodeJS.ErrnoException).code ?? String(e);
    }
    if (why !== problem) {
      problem = why;
      if (why)
        logWarn(
          log,
          `agent: token file ${logSafe(path)}: ${logSafe(why)}; no token is sent until it is fixed`,
        );
    }
    if (next === token) return false;
    token = next;
    return true;
  };
  read();
  let watcher: FSWatcher | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    watcher = watch(dirname(path), { persistent: false }, (_event, file) => {
      // Several events come for one write or swap: re-read once they settled.
      if (file !== null && file !== basename(path) && !String(file).startsWith("..")) return;
      clearTimeout(timer);
      timer = setTimeout(() => {
        if (read()) {
          log(`agent: token file ${logSafe(path)} changed; the next upstream stream uses the new token`);
          changed();
        }
      }, 20);
    });
  } catch (e) {
    logWarn(
      log,
      `agent: cannot watch ${logSafe(dirname(path))} (${logSafe(String(e))}): the token is read only at start`,
    );
  }
  return {
    // Read again at each use too (once per upstream stream): a change the watch missed is not lost.
    current: () => {
      read();
      return token;
    },
    close() {
      clearTimeout(timer);
      watcher?.close();
    },
  };
}
