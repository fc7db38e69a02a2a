/** The Worker's writer: each level through its console method (Workers Logs records it), JSON lines when asked. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { workerLog } from "../../../functions/workers/log.ts";
import { logDebug, logError, logWarn } from "../../../lib/log/line-log.ts";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("workerLog", () => {
  it("writes JSON lines through the console method of each level", () => {
    const calls: [string, string][] = [];
    for (const m of ["log", "warn", "error", "debug"] as const)
      vi.spyOn(console, m).mockImplementation((line: string) => void calls.push([m, line]));
    const log = workerLog({ format: "json", levels: { default: "debug", scopes: {} } });
    log("push 1: full, 2 resource(s) changed");
    logWarn(log, "xds: refused StreamAggregatedResources: no", { node: 'a"b' });
    logError(log, "ingest: the Durable Object failed");
    logDebug(log, "relay: Pod: queued");
    expect(calls.map(([m, line]) => [m, JSON.parse(line).level, JSON.parse(line).scope])).toEqual([
      ["log", "info", "push"],
      ["warn", "warn", "ads"],
      ["error", "error", "ingest"],
      ["debug", "debug", "relay"],
    ]);
    expect(JSON.parse(calls[1]?.[1] as string).fields).toEqual({ node: 'a"b' });
  });

  it("drops what LOG_LEVEL leaves out", () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const w = workerLog({ format: "text", levels: { default: "warn", scopes: {} } });
    w("push 1: full");
    expect(log).not.toHaveBeenCalled();
  });
});
