/**
 * /debug/config_dump?proxyID=: what one proxy was sent, as an Envoy admin ConfigDump (the
 * resources of its record, decoded from what is published in its view at the versions the record
 * says; versions are content hashes, so an equal version is the very bytes sent), plus an
 * `edgepilot` section comparing, per type, each listed resource's sent version with the one
 * published now (what `edgepilot proxy-status <proxy>` prints). Bounded by the record: at most
 * recordBounds.names resources per type (sent_count says how many were sent).
 */
import { create, fromBinary, toJson } from "@bufbuild/protobuf";
import { NodeSchema } from "../gen/envoy/config/core/v3/base_pb.ts";
import type { StoredResource } from "../resources/types.ts";
import { xdsType } from "../resources/xds-types.ts";
import { keys } from "../store/keys.ts";
import type { Store } from "../store/store.ts";
import { isExpired, type ProxyRecord, type ProxyRecordType } from "../xds/proxy-record.ts";
import { xdsRegistry } from "../xds/registry.ts";
import { createStoreSource } from "../xds/source.ts";
import type { Views } from "../xds/view-source.ts";

/** One listed resource: the version the proxy was sent and the one published now (null: gone). */
export interface DumpCompare {
  name: string;
  sent: string;
  published: string | null;
}

/** One type of the edgepilot section. */
export interface DumpType {
  type_url: string;
  version_sent?: string;
  version_acked?: string;
  nack?: { nonce: string; version_info: string; message: string };
  /** How many resources the proxy was sent; `resources` compares the first ones the record lists. */
  sent_count: number;
  resources: DumpCompare[];
}

/** What config_dump answers. */
export interface ConfigDump {
  configs: Record<string, unknown>[];
  edgepilot: { proxy: string; view: string; updated_at: string; types: DumpType[] };
}

/** A published resource as Envoy's config dump shows an Any: `@type` and its fields (proto names). */
export function resourceJson(r: StoredResource): unknown {
  const schema = xdsRegistry.getMessage(r.typeUrl.slice(r.typeUrl.lastIndexOf("/") + 1));
  if (!schema) return { "@type": r.typeUrl, "@error": "no schema for this type" };
  try {
    const json = toJson(schema, fromBinary(schema, r.body), {
      registry: xdsRegistry,
      useProtoFieldName: true,
    });
    return { "@type": r.typeUrl, ...(json as object) };
  } catch (err) {
    return {
      "@type": r.typeUrl,
      "@error": `cannot render: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
}

/** The comparison of one record type with what is published (`published`: name ─▶ resource). Pure. */
export function compareType(t: ProxyRecordType, published: ReadonlyMap<string, StoredResource>): DumpType {
  const versions = t.sent?.versions ?? {};
  return {
    type_url: t.typeUrl,
    ...(t.sent && { version_sent: t.sent.versionInfo }),
    ...(t.ackedVersion !== undefined && { version_acked: t.ackedVersion }),
    ...(t.nack && {
      nack: { nonce: t.nack.nonce, version_info: t.nack.versionInfo, message: t.nack.message },
    }),
    sent_count: t.sentCount,
    resources: Object.entries(versions).map(([name, sent]) => ({
      name,
      sent,
      published: published.get(name)?.version ?? null,
    })),
  };
}

/** A connected proxy's status record (as every per-proxy debug page reads it), or why there is none (404). */
export async function liveProxyRecord(
  store: Store,
  q: { proxyID: string; now: number },
): Promise<{ ok: true; record: ProxyRecord } | { ok: false; error: string }> {
  const entry = await store.get<ProxyRecord>(keys.proxy(q.proxyID));
  if (!entry || isExpired(entry.value, q.now))
    return {
      ok: false,
      error:
        "no live status record for this proxyID: it is not connected to this control plane (or its record expired)",
    };
  return { ok: true, record: entry.value };
}

/** The dump, or why there is none (no live record: 404). */
export async function readConfigDump(
  store: Store,
  views: Views,
  q: { proxyID: string; now: number },
): Promise<{ ok: true; dump: ConfigDump } | { ok: false; error: string }> {
  const live = await liveProxyRecord(store, q);
  if (!live.ok) return live;
  const record = live.record;
  // The node as the record keeps it: GENERATOR picks the set (proxyless, sidecar or gateway), CLUSTER_ID
  // the VIPs, NETWORK and REQUESTED_NETWORK_VIEW its assignments, a gateway's LABELS its Gateways.
  const metadata = {
    ...(record.generator !== "" && { GENERATOR: record.generator }),
    ...(record.cluster !== undefined && { CLUSTER_ID: record.cluster }),
    ...(record.network !== undefined && { NETWORK: record.network }),
    ...(record.networkView !== undefined && { REQUESTED_NETWORK_VIEW: record.networkView }),
    ...(record.labels !== undefined && { LABELS: record.labels }),
  };
  const view = await views.forNode(create(NodeSchema, { id: record.nodeId, metadata }));
  const source = views.source(view, createStoreSource(store));
  const configs: Record<string, unknown>[] = [];
  const types: DumpType[] = [];
  for (const t of record.types) {
    const names = Object.keys(t.sent?.versions ?? {});
    const found = names.length === 0 ? [] : await source.get(t.typeUrl, names);
    const published = new Map(found.map((r) => [r.name, r]));
    const compared = compareType(t, published);
    types.push(compared);
    const kind = xdsType(t.typeUrl)?.dump;
    if (!kind) continue;
    const listed = compared.resources.flatMap((c) => {
      const r = published.get(c.name);
      return r && r.version === c.sent ? [kind.wrap(c.sent, resourceJson(r), c.name)] : [];
    });
    configs.push({
      "@type": `type.googleapis.com/envoy.admin.v3.${kind.type}`,
      ...(t.sent && { version_info: t.sent.versionInfo }),
      [kind.list]: listed,
    });
  }
  return {
    ok: true,
    dump: {
      configs,
      edgepilot: {
        proxy: record.nodeId,
        view: view.key === "" ? "(shared)" : view.key,
        updated_at: new Date(record.updatedAt).toISOString(),
        types,
      },
    },
  };
}
