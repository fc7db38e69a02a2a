/**
 * The push log's line says how many published resources a push changed, and of a refresh push
 * (lib/push/push-refresh.ts) that Envoy sidecars rebuild theirs: one that changed nothing else
 * reads "0 resource(s) changed" and is still logged.
 */
import { describe, expect, it } from "vitest";
import type { Flush } from "../../../lib/core/hooks.ts";
import { createPushLogObserver, pushLogLine } from "../../../lib/core/push-log.ts";
import { pushRequest } from "../../../lib/model/index.ts";
import type { ResourceChange } from "../../../lib/resources/changes.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";

const eds: ResourceChange = {
  typeUrl: TypeUrl.endpoint,
  name: "outbound|80||a.ns.svc.cluster.local",
  version: "v1",
};

const flush = (changes: ResourceChange[], refresh?: true): Flush => ({
  kind: "done",
  version: 7,
  request: pushRequest({ full: true, reason: "config", configs: [], start: 0 }),
  changes,
  ...(refresh && { refresh }),
  recovered: false,
});

describe("pushLogLine", () => {
  it.each([
    [[eds], undefined, "push 7: full, 1 resource(s) changed, 12ms after the first event"],
    [
      [],
      true,
      "push 7: full, 0 resource(s) changed (Envoy sidecars rebuild theirs), 12ms after the first event",
    ],
    [
      [eds],
      true,
      "push 7: full, 1 resource(s) changed (Envoy sidecars rebuild theirs), 12ms after the first event",
    ],
  ] as const)("%j", (changes, refresh, line) => {
    expect(pushLogLine(flush([...changes], refresh), 12)).toBe(line);
  });

  it("the observer logs that line for a refresh push that changed nothing", () => {
    const lines: string[] = [];
    createPushLogObserver((l) => lines.push(l)).onPush?.({
      flush: flush([], true),
      latencyMs: 3,
    } as never);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/0 resource\(s\) changed \(Envoy sidecars rebuild theirs\)/);
  });
});
