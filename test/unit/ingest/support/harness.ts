/** Ingest ▶ flush on a memory store with a manual clock, and what proxies would be served, decoded. */
import { fromBinary } from "@bufbuild/protobuf";
import { HealthStatus } from "../../../../lib/gen/envoy/config/core/v3/health_check_pb.ts";
import { ClusterLoadAssignmentSchema } from "../../../../lib/gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import {
  type ApplySummary,
  applyEvents,
  defaultRegistryOptions,
  type RegistryOptions,
  resync,
  validateEvents,
  validateList,
} from "../../../../lib/ingest/index.ts";
import { kindOf } from "../../../../lib/kinds/descriptors.ts";
import { defaultDebounceOptions } from "../../../../lib/push/debounce.ts";
import type { FlushResult } from "../../../../lib/push/flush.ts";
import { runDebounceTurn } from "../../../../lib/push/run.ts";
import { meshOverrides } from "../../../../lib/registry/mesh/effective-mesh.ts";
import type { StoredResource } from "../../../../lib/resources/types.ts";
import { TypeUrl } from "../../../../lib/resources/xds-types.ts";
import type { EndpointShardsRecord } from "../../../../lib/shards/shards-record.ts";
import { keys } from "../../../../lib/store/index.ts";
import { createMemoryStore } from "../../../../lib/store/memory.ts";
import { generators } from "../../xds/checked-generators.ts";

export interface ServedEndpoint {
  address: string;
  health: string;
  locality: string;
}

/** A control plane core for one cluster, driven by hand. */
export function createHarness(registry: Partial<RegistryOptions> = {}, cluster = "east") {
  const store = createMemoryStore();
  let clock = 1_700_000_000_000;
  const now = () => clock;
  const deps = { store, now, registry: { ...defaultRegistryOptions, ...registry } };
  const flushes: Extract<FlushResult, { kind: "done" }>[] = [];
  /** What the flushes logged. */
  const lines: string[] = [];
  async function ingestAs(from: string, ...events: unknown[]): Promise<ApplySummary> {
    const v = validateEvents(events);
    if (!v.ok) throw new Error(`bad test events: ${JSON.stringify(v.error)}`);
    return applyEvents(deps, from, v.value);
  }

  return {
    store,
    flushes,
    lines,
    ingest(...events: unknown[]): Promise<ApplySummary> {
      return ingestAs(cluster, ...events);
    },
    /** Ingests as another cluster of the same mesh. */
    ingestAs,
    async resync(kind: string, items: unknown[], resourceVersion: string): Promise<ApplySummary> {
      // The list's kind is its objects' (`GatewayList` for the id KubernetesGateway).
      const listKind = `${kindOf(kind)?.objectKind ?? kind}List`;
      const v = await validateList(kind, { kind: listKind, metadata: { resourceVersion }, items });
      if (!v.ok) throw new Error(`bad test list: ${JSON.stringify(v.error)}`);
      return resync(deps, cluster, v.value);
    },
    /** Lets the debounce push everything queued; returns the flushes it ran. */
    async settle() {
      clock += defaultDebounceOptions.debounceMax;
      const turn = await runDebounceTurn(
        {
          store,
          generators,
          context: { domainSuffix: deps.registry.domainSuffix },
          now,
          meshEnv: meshOverrides(deps.registry),
          log: (line) => lines.push(line),
        },
        defaultDebounceOptions,
      );
      flushes.push(...turn.flushes);
      return turn.flushes;
    },
    /** The model endpoints of every shard of a service, as stored (labels, service accounts, localities). */
    async shards(ns: string, host: string) {
      return (await store.get<EndpointShardsRecord>(keys.shards(ns, host)))?.value.shards;
    },
    /** The endpoints served for `outbound|<port>||<host>`, sorted by address; undefined when not published. */
    async served(host: string, port = 9080): Promise<ServedEndpoint[] | undefined> {
      const stored = await store.get<StoredResource>(
        keys.resource(TypeUrl.endpoint, `outbound|${port}||${host}`),
      );
      if (!stored) return undefined;
      const cla = fromBinary(ClusterLoadAssignmentSchema, stored.value.body);
      return cla.endpoints
        .flatMap((l) =>
          l.lbEndpoints.map((e) => ({
            address:
              e.hostIdentifier.case === "endpoint"
                ? e.hostIdentifier.value.address?.address.case === "socketAddress"
                  ? e.hostIdentifier.value.address.address.value.address
                  : ""
                : "",
            health: HealthStatus[e.healthStatus],
            locality: [l.locality?.region, l.locality?.zone, l.locality?.subZone].join("/"),
          })),
        )
        .sort((a, b) => (a.address < b.address ? -1 : 1));
    },
  };
}
