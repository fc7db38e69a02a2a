/**
 * The mesh core's metrics, with istiod's names, labels and buckets where istiod has the metric
 * (pilot/pkg/xds/monitoring.go, pkg/xds/monitoring.go, pilot/pkg/serviceregistry/kube/controller),
 * so existing dashboards work, plus edgepilot_* of our own. It is a MeshObserver: a host adds it to
 * its core (`core.observe(metrics.observer)`) and serves `registry.expose()` at GET /metrics.
 * Every xDS method is a few counter bumps on children resolved once (no string built per event).
 */

import type { IngestReport, MeshObserver, StreamKind, TurnReport } from "../core/hooks.ts";
import { isQuietFlush } from "../core/push-log.ts";
import type { WatchEvent } from "../ingest/events.ts";
import { type KindDescriptor, kindTable } from "../kinds/descriptors.ts";
import { xdsTypes } from "../resources/xds-types.ts";
import { createRegistry, type Family, type Gauge, type Registry } from "./registry.ts";

/** istiod's buckets (seconds) for push, send, debounce and convergence times. */
const pushBuckets = [0.01, 0.1, 1, 3, 5, 10, 20, 30];
const convergenceBuckets = [0.1, 0.5, 1, 3, 5, 10, 20, 30];
const pushContextBuckets = [0.01, 0.1, 0.5, 1, 3, 5];

/** The most distinct ISTIO_VERSION values pilot_xds keeps; later ones count as "other". */
export const maxVersionLabels = 32;
/** Characters kept of an ISTIO_VERSION label value. */
const maxVersionChars = 64;

/** istiod's metric type of a type URL (model.GetMetricType); any other type counts as "other". */
const metricTypes: ReadonlyMap<string, string> = new Map(xdsTypes.map((t) => [t.typeUrl, t.metric]));

/** istiod's informer names by kind (lib/kinds/descriptors.ts): registry kinds count in pilot_k8s_reg_events, Istio kinds in pilot_k8s_cfg_events. */
const registryKinds = labelsOf("registry");
const configKinds = labelsOf("config");

function labelsOf(source: KindDescriptor["source"]): ReadonlyMap<string, string> {
  return new Map(kindTable.filter((d) => d.source === source).map((d) => [d.kind, d.metricsLabel]));
}
const eventNames: Readonly<Record<string, string>> = { ADDED: "add", MODIFIED: "update", DELETED: "delete" };

/** The metrics of one mesh core: its registry and the observer that feeds it. */
export interface MeshMetrics {
  readonly registry: Registry;
  readonly observer: MeshObserver;
}

/** Children keyed by a type URL, resolved once: one map lookup per event. */
function byType<T>(family: Family<T>): (typeUrl: string) => T {
  const children = new Map<string, T>();
  for (const [url, label] of metricTypes) children.set(url, family.labels(label));
  const other = family.labels("other");
  return (typeUrl) => children.get(typeUrl) ?? other;
}

/** Declares every metric on `registry` (default a new one) and returns the observer feeding them. */
export function createMeshMetrics(registry: Registry = createRegistry()): MeshMetrics {
  const r = registry;
  // pilot_xds: connected proxies by their ISTIO_VERSION, as istiod's recordXDSClients.
  const xds = r.gauge({
    name: "pilot_xds",
    help: "Number of endpoints connected to this pilot using XDS.",
    labelNames: ["version"],
  });
  const streams = r.gauge({
    name: "edgepilot_xds_streams",
    help: "Open xDS streams by kind (sotw and delta ADS, Connect Watch).",
    labelNames: ["kind"],
  });
  const pushes = byType(
    r.counter({
      name: "pilot_xds_pushes",
      help: "Pilot build and send errors for lds, rds, cds and eds.",
      labelNames: ["type"],
    }),
  );
  const pushTime = byType(
    r.histogram({
      name: "pilot_xds_push_time",
      help: "Total time in seconds Pilot takes to push lds, rds, cds and eds.",
      labelNames: ["type"],
      buckets: pushBuckets,
    }),
  );
  const sendTime = r
    .histogram({
      name: "pilot_xds_send_time",
      help: "Total time in seconds Pilot takes to send generated configuration.",
      buckets: pushBuckets,
    })
    .labels();
  const convergence = r
    .histogram({
      name: "pilot_proxy_convergence_time",
      help: "Delay in seconds between config change and a proxy receiving all required configuration.",
      buckets: convergenceBuckets,
    })
    .labels();
  const debounce = r
    .histogram({
      name: "pilot_debounce_time",
      help: "Delay in seconds between the first config enters debouncing and the merged push request is pushed into the push queue.",
      buckets: pushBuckets,
    })
    .labels();
  const flushTime = r
    .histogram({
      name: "pilot_pushcontext_init_seconds",
      help: "Total time in seconds Pilot takes to init pushContext (edgepilot: one flush, regenerating and publishing what the push changed).",
      buckets: pushContextBuckets,
    })
    .labels();
  const rejects = byType(
    r.counter({
      name: "pilot_total_xds_rejects",
      help: "Total number of XDS responses from pilot rejected by proxy.",
      labelNames: ["type"],
    }),
  );
  const acks = byType(
    r.counter({
      name: "edgepilot_xds_acks",
      help: "xDS responses a proxy ACKed, by type.",
      labelNames: ["type"],
    }),
  );
  const regEvents = r.counter({
    name: "pilot_k8s_reg_events",
    help: "Events from k8s registry.",
    labelNames: ["type", "event"],
  });
  const cfgEvents = r.counter({
    name: "pilot_k8s_cfg_events",
    help: "Events from k8s config.",
    labelNames: ["type", "event"],
  });
  const inbound = r.counter({
    name: "pilot_inbound_updates",
    help: "Total number of updates received by pilot.",
    labelNames: ["type"],
  });
  const batches = r.counter({
    name: "edgepilot_ingest_batches",
    help: "Ingest calls applied, by call (events, resync, admission).",
    labelNames: ["call"],
  });
  const ingestEvents = r.counter({
    name: "edgepilot_ingest_events",
    help: "Events (and resync list items) in applied ingest calls, by outcome.",
    labelNames: ["outcome"],
  });
  const stale = ingestEvents.labels("stale");
  const meshPushes = r.counter({
    name: "edgepilot_pushes",
    help: "Pushes announced to streams, full or incremental (EDS only).",
    labelNames: ["kind"],
  });
  const changed = r
    .counter({
      name: "edgepilot_push_resources_changed",
      help: "Resources changed (upserted or removed) by pushes.",
    })
    .labels();
  const turnTime = r
    .histogram({
      name: "edgepilot_debounce_turn_seconds",
      help: "Duration of one debounce turn (reading the queue and every flush it ran).",
      buckets: pushContextBuckets,
    })
    .labels();
  const versions = new Map<string, Gauge>();
  const versionGauge = (version: string): Gauge => {
    const found = versions.get(version);
    if (found) return found;
    const label = versions.size >= maxVersionLabels ? "other" : version.slice(0, maxVersionChars);
    const g = xds.labels(label);
    if (versions.size < maxVersionLabels) versions.set(version, g);
    return g;
  };
  const streamKinds: Record<StreamKind, Gauge> = {
    sotw: streams.labels("sotw"),
    delta: streams.labels("delta"),
    watch: streams.labels("watch"),
  };

  const countEvents = (events: readonly WatchEvent[]) => {
    // Tallied by kind and type first: a labels() lookup per event made a large batch one long step.
    const tally = new Map<string, Map<WatchEvent["type"], number>>();
    for (const e of events) {
      if (e.type === "BOOKMARK" || e.type === "REJECTED") continue;
      const kind = e.object.kind;
      let byType = tally.get(kind);
      if (byType === undefined) {
        byType = new Map();
        tally.set(kind, byType);
      }
      byType.set(e.type, (byType.get(e.type) ?? 0) + 1);
    }
    for (const [kind, byType] of tally) {
      for (const [type, n] of byType) {
        countKindEvent(kind, eventNames[type] as string, n);
        const update = inboundType(kind, type);
        if (update) inbound.labels(update).inc(n);
      }
    }
  };
  const countKindEvent = (kind: string, event: string, n: number) => {
    if (n === 0) return;
    const reg = registryKinds.get(kind);
    const cfg = reg === undefined ? configKinds.get(kind) : undefined;
    if (reg !== undefined) regEvents.labels(reg, event).inc(n);
    else if (cfg !== undefined) cfgEvents.labels(cfg, event).inc(n);
  };
  // Labelled by kind only: a label per object name would let ingest grow the registry without bound.
  const rejectedConfigs = r.counter({
    name: "pilot_total_rejected_configs",
    help: "Total number of configs that Pilot had to reject or ignore.",
    labelNames: ["type"],
  });

  const observer: MeshObserver = {
    onIngest(report: IngestReport) {
      batches.labels(report.call).inc();
      const s = report.summary;
      ingestEvents.labels("applied").inc(s.applied);
      ingestEvents.labels("unchanged").inc(s.unchanged);
      stale.inc(s.stale);
      if (report.events) countEvents(report.events);
      if (report.kind !== undefined && s.listed) {
        countKindEvent(report.kind, "add", s.listed.add);
        countKindEvent(report.kind, "update", s.listed.update);
        countKindEvent(report.kind, "delete", s.listed.delete);
      }
      for (const r of s.rejected) if (!r.repeated) rejectedConfigs.labels(r.kind).inc();
    },
    onTurn(report: TurnReport) {
      turnTime.observe(Math.max(0, report.endedAt - report.startedAt) / 1000);
      for (const f of report.turn.flushes) {
        if (f.startedAt === undefined || f.endedAt === undefined) continue;
        flushTime.observe(Math.max(0, f.endedAt - f.startedAt) / 1000);
        if (f.request) debounce.observe(Math.max(0, f.startedAt - f.request.start) / 1000);
      }
    },
    onPush(report) {
      if (isQuietFlush(report.flush)) return;
      meshPushes.labels(report.flush.request?.full === false ? "incremental" : "full").inc();
      changed.inc(report.flush.changes.length);
    },
    onStreamOpened(kind, version) {
      streamKinds[kind].inc();
      versionGauge(version).inc();
    },
    onStreamClosed(kind, version) {
      streamKinds[kind].dec();
      versionGauge(version).dec();
    },
    onResponse(typeUrl, answerSeconds, sendSeconds) {
      pushes(typeUrl).inc();
      pushTime(typeUrl).observe(answerSeconds);
      if (sendSeconds !== undefined) sendTime.observe(sendSeconds);
    },
    onConverged(seconds) {
      convergence.observe(seconds);
    },
    onAck(typeUrl) {
      acks(typeUrl).inc();
    },
    onNack(typeUrl) {
      rejects(typeUrl).inc();
    },
  };
  return { registry: r, observer };
}

/** istiod's pilot_inbound_updates type of an event: svc, svcdelete, eds or config (none for others). */
function inboundType(kind: string, type: WatchEvent["type"]): string | undefined {
  if (kind === "Service") return type === "DELETED" ? "svcdelete" : "svc";
  if (kind === "EndpointSlice" || kind === "Endpoints") return "eds";
  if (configKinds.has(kind)) return "config";
  return undefined;
}
