/**
 * The pushes of one ingest call, merged as they come (createPushMerger: mergeAll's semantics), with
 * the service hosts their full pushes name (serviceHostsOf's answer) gathered the same way. A
 * 100k-event batch makes 100k requests: merged and parsed once at its end, they would hold the
 * event loop past the 50 ms bound in one step after the paced loop; added one by one, the work goes
 * with each event.
 */
import { createPushMerger, type PushRequest, parseConfigKey } from "../model/index.ts";

/** One call's pushes: add each outcome's push; read the merged request and the hosts at the end. */
export interface BatchPushes {
  add(push: PushRequest): void;
  /** mergeAll of what was added; undefined when nothing was. */
  merged(): PushRequest | undefined;
  /** The hosts whose services the full pushes name (see dangling.ts serviceHostsOf). */
  readonly serviceHosts: ReadonlySet<string>;
}

/** An empty BatchPushes. */
export function createBatchPushes(): BatchPushes {
  const merger = createPushMerger();
  const serviceHosts = new Set<string>();
  /** ConfigKeys of full pushes already looked at: each is parsed once. */
  const seen = new Set<string>();
  return {
    add(push) {
      merger.add(push);
      if (!push.full) return;
      for (const key of push.configsUpdated ?? []) {
        if (seen.has(key)) continue;
        seen.add(key);
        const c = parseConfigKey(key);
        if (c.kind === "ServiceEntry") serviceHosts.add(c.name);
      }
    },
    merged: () => merger.result(),
    serviceHosts,
  };
}
