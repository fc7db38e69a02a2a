/**
 * The per-proxy status record stored under keys.proxy(node id): bounded in size whatever the
 * proxy sends, stamped with the stream that owns it, and expiring by itself when no live stream
 * refreshes it (a process that died cannot delete its records). Pure: time is passed in.
 */
import type { ProxyStatus, ProxyTypeStatus } from "../resources/types.ts";

/**
 * A stream's status as a session reports it after an ACK or NACK: the status itself, or a read
 * that builds it when called (as of then), so a report costs nothing until a record is written.
 */
export type StatusReport = ProxyStatus | (() => ProxyStatus);

/**
 * The longest node id accepted on a stream. An Istio node id is
 * `<type>~<ip>~<pod>.<namespace>~<namespace>.svc.<domain suffix>`: at most about 700 characters
 * (pod name 253, namespace 63 twice, domain suffix 253, IPv6 45), so 1024 leaves room and refuses
 * the 1 MB ids that once filled the heap.
 */
export const maxNodeIdLength = 1024;

/** Bounds of one record: a status page, not a config dump (the store has the resources). */
export const recordBounds = {
  /** Type URLs listed; the rest are counted in `typesOmitted`. Four are served; a few more are asked for. */
  types: 8,
  /** Names listed per list (subscribed names, sent versions); the rest are counted. */
  names: 16,
  /** Characters kept of any one string from the proxy (names, type URLs, versions, generator). */
  chars: 256,
  /** Characters kept of a NACK's error_detail message. */
  nackChars: 1024,
  /** A gateway's labels kept. */
  labels: 32,
} as const;

/** How long a record lives without a refresh; a live stream rewrites it well before. */
export const proxyRecordTtlMs = 5 * 60_000;

/** One type URL of a record: the lists cut to recordBounds.names, with their full sizes. */
export interface ProxyRecordType extends ProxyTypeStatus {
  /** How many names the proxy subscribes to explicitly (`subscribed` lists the first ones). */
  subscribedCount: number;
  /** How many resources were last sent (`sent.versions` lists the first ones). */
  sentCount: number;
}

/** What keys.proxy(node id) holds. */
export interface ProxyRecord {
  nodeId: string;
  generator: string;
  /** Node metadata CLUSTER_ID and ISTIO_VERSION (cut to recordBounds.chars), when the node has them. */
  cluster?: string;
  istioVersion?: string;
  /** Node metadata NETWORK and REQUESTED_NETWORK_VIEW (cut as above): config_dump reads through its view. */
  network?: string;
  networkView?: string;
  /** A gateway's LABELS (at most recordBounds.labels, each cut as above): config_dump selects its Gateways by them. */
  labels?: Record<string, string>;
  /** The stream that wrote it: only that stream deletes it when it ends. */
  streamId: string;
  /** When that stream began (ms since the epoch): the proxy is connected since then. */
  connectedAt?: number;
  /** When it was written (ms since the epoch). */
  updatedAt: number;
  /** After this (ms since the epoch) the record is stale: readers skip it and the sweep deletes it. */
  expiresAt: number;
  types: ProxyRecordType[];
  /** Type URLs the stream has beyond `types`. */
  typesOmitted: number;
}

/** Why a node id cannot be served (or undefined when it can); the message names the field. */
export function nodeIdProblem(id: string): string | undefined {
  if (id.length > maxNodeIdLength) {
    return `node.id is ${id.length} characters; at most ${maxNodeIdLength} are accepted (an Istio node id is under 700)`;
  }
  const bad = /[\p{Cc}\p{Cs}]/u.exec(id);
  if (bad) {
    return `node.id has a control character or lone surrogate (U+${(bad[0].codePointAt(0) ?? 0)
      .toString(16)
      .toUpperCase()
      .padStart(4, "0")}) at index ${bad.index}`;
  }
  return undefined;
}

/** The bounded record of `status`, written at `now` by stream `streamId`. */
export function proxyRecord(
  status: ProxyStatus,
  options: { streamId: string; now: number; ttlMs?: number; connectedAt?: number },
): ProxyRecord {
  const { now, streamId } = options;
  return {
    nodeId: status.nodeId,
    generator: cut(status.generator),
    ...(status.cluster !== undefined && { cluster: cut(status.cluster) }),
    ...(status.istioVersion !== undefined && { istioVersion: cut(status.istioVersion) }),
    ...(status.network !== undefined && { network: cut(status.network) }),
    ...(status.networkView !== undefined && { networkView: cut(status.networkView) }),
    ...(status.labels !== undefined && {
      labels: Object.fromEntries(
        Object.entries(status.labels)
          .slice(0, recordBounds.labels)
          .map(([k, v]) => [cut(k), cut(v)]),
      ),
    }),
    streamId,
    ...(options.connectedAt !== undefined && { connectedAt: options.connectedAt }),
    updatedAt: now,
    expiresAt: now + (options.ttlMs ?? proxyRecordTtlMs),
    types: status.types.slice(0, recordBounds.types).map(boundType),
    typesOmitted: Math.max(0, status.types.length - recordBounds.types),
  };
}

/** True when `record` was not refreshed in time (or is not a record at all). */
export function isExpired(record: unknown, now: number): boolean {
  const expiresAt = (record as Partial<ProxyRecord> | undefined)?.expiresAt;
  return typeof expiresAt !== "number" || expiresAt <= now;
}

function boundType(t: ProxyTypeStatus): ProxyRecordType {
  const out: ProxyRecordType = {
    typeUrl: cut(t.typeUrl),
    wildcard: t.wildcard,
    subscribed: bounded(t.subscribed)
      ? t.subscribed
      : t.subscribed.slice(0, recordBounds.names).map((n) => cut(n)),
    subscribedCount: t.subscribedCount ?? t.subscribed.length,
    sentCount: t.sentCount ?? (t.sent ? countKeys(t.sent.versions) : 0),
  };
  if (t.sent) {
    out.sent = {
      versionInfo: cut(t.sent.versionInfo),
      nonce: cut(t.sent.nonce),
      versions: boundedVersions(t.sent.versions),
    };
  }
  if (t.ackedVersion !== undefined) out.ackedVersion = cut(t.ackedVersion);
  if (t.nack) {
    out.nack = {
      versionInfo: cut(t.nack.versionInfo),
      nonce: cut(t.nack.nonce),
      message: cut(t.nack.message, recordBounds.nackChars),
    };
  }
  return out;
}

/**
 * Whether `names` is within the record's bounds as it is (few enough, none too long): then the
 * record takes the status's own array (a status is built fresh for each record and never changed)
 * instead of a copy of it, once a second per stream.
 */
function bounded(names: readonly string[]): boolean {
  if (names.length > recordBounds.names) return false;
  // Indexed: a record a second per stream, where for-of made an iterator result per name.
  for (let i = 0; i < names.length; i++) if ((names[i] as string).length > recordBounds.chars) return false;
  return true;
}

function countKeys(record: Readonly<Record<string, string>>): number {
  let n = 0;
  for (const _ in record) n++;
  return n;
}

/** The first recordBounds.names versions, names and versions cut; `versions` itself when within bounds. */
function boundedVersions(versions: Readonly<Record<string, string>>): Record<string, string> {
  let n = 0;
  let within = true;
  for (const name in versions) {
    if (
      ++n > recordBounds.names ||
      name.length > recordBounds.chars ||
      (versions[name] as string).length > recordBounds.chars
    ) {
      within = false;
      break;
    }
  }
  if (within) return versions;
  const listed = Object.entries(versions).slice(0, recordBounds.names);
  return Object.fromEntries(listed.map(([n, v]) => [cut(n), cut(v)]));
}

function cut(s: string, max: number = recordBounds.chars): string {
  return s.length > max ? `${s.slice(0, max)}…(+${s.length - max} chars)` : s;
}
