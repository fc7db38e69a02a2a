/**
 * The relay's Secret watches: one kind watcher per Secret a Gateway names (lib/relay/secret-refs.ts
 * decides which), in its namespace with `fieldSelector=metadata.name=<name>`, never a watch of all
 * Secrets. It hears the relayed Gateways and ReferenceGrants through `observe` / `observeList`. A
 * Secret's list is one object or none, so it is sent as events (an ADDED, or a DELETED when the
 * Secret is gone), never as a resync of the kind, which would drop every other Secret.
 */
import { kindOf } from "../../../lib/kinds/descriptors.ts";
import { watchSpec } from "../../../lib/relay/kinds.ts";
import type { KubeList, WatchEvent } from "../../../lib/relay/list.ts";
import {
  createSecretRefs,
  type SecretRef,
  type SecretRefChange,
  secretRefSource,
} from "../../../lib/relay/secret-refs.ts";
import { createKindWatcher, type KindWatcher, type KindWatcherDeps } from "./kind-watcher.ts";

/** The Secret watches of one relay. */
export interface SecretWatchers {
  /** A relayed watch event of any kind (Gateways and ReferenceGrants are read, the rest ignored). */
  observe(event: WatchEvent): void;
  /** A relayed complete list of any kind. */
  observeList(list: KubeList): void;
  pause(): void;
  resume(): void;
  resync(): void;
  stop(): void;
  /** The Secrets watched now (`<ns>/<name>`). */
  watched(): string[];
}

/** Default RELAY_MAX_SECRETS: enough for every gateway of a large cluster, bounded all the same. */
export const defaultMaxSecrets = 1000;

/** Builds the Secret watches; `deps.sender` is the relay's real sender. */
export function createSecretWatchers(
  deps: KindWatcherDeps & { maxWatched?: number; paused?: () => boolean },
): SecretWatchers {
  const descriptor = kindOf("Secret");
  if (!descriptor) throw new Error("the kind table has no Secret");
  const refs = createSecretRefs({ maxWatched: deps.maxWatched ?? defaultMaxSecrets });
  const watchers = new Map<string, KindWatcher>();
  let stopped = false;

  const start = (ref: SecretRef) => {
    const key = `${ref.namespace}/${ref.name}`;
    const spec = {
      ...watchSpec(descriptor),
      namespace: ref.namespace,
      fieldSelector: `metadata.name=${ref.name}`,
    };
    const sender = {
      ...deps.sender,
      event: (kind: string, e: WatchEvent) => deps.sender.event(kind, e),
      resync: (kind: string, list: KubeList) => {
        const rv = list.metadata.resourceVersion;
        if (list.items.length === 0)
          deps.sender.event(kind, {
            type: "DELETED",
            object: {
              apiVersion: "v1",
              kind: "Secret",
              metadata: { namespace: ref.namespace, name: ref.name, ...(rv && { resourceVersion: rv }) },
            },
          });
        for (const item of list.items)
          deps.sender.event(kind, {
            type: "ADDED",
            object: { apiVersion: "v1", kind: "Secret", ...(item as object) },
          });
      },
    };
    const w = createKindWatcher(spec, { ...deps, sender });
    watchers.set(key, w);
    if (deps.paused?.()) w.pause();
    else w.start();
  };

  const apply = (c: SecretRefChange) => {
    for (const line of c.log) deps.log(`relay: ${line}`);
    if (stopped) return;
    for (const r of c.stop) {
      const key = `${r.namespace}/${r.name}`;
      watchers.get(key)?.stop();
      watchers.delete(key);
    }
    for (const r of c.start) start(r);
  };

  return {
    observe(e) {
      const o = e.object as { apiVersion?: string; kind?: string } | null;
      if (o && secretRefSource(o)) apply(refs.event(e));
    },
    observeList(list) {
      const source = secretRefSource({
        apiVersion: list.apiVersion ?? "",
        kind: (list.kind ?? "").replace(/List$/, ""),
      });
      if (source) apply(refs.resync(list.items, source));
    },
    pause: () => {
      for (const w of watchers.values()) w.pause();
    },
    resume: () => {
      for (const w of watchers.values()) w.resume();
    },
    resync: () => {
      for (const w of watchers.values()) w.resync();
    },
    stop: () => {
      stopped = true;
      for (const w of watchers.values()) w.stop();
      watchers.clear();
    },
    watched: () => [...watchers.keys()].sort(),
  };
}
