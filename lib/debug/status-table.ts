/**
 * The table `edgepilot proxy-status` prints, as `istioctl proxy-status` prints istiod's syncz
 * (istioctl/pkg/writer/pilot/status.go): columns NAME, CLUSTER, CDS, LDS, EDS, RDS, ISTIOD,
 * VERSION; rows sorted by cluster then proxy; cells padded like Go's tabwriter (padding 5). Pure.
 */
import { type XdsType, xdsTypes } from "../resources/xds-types.ts";
import type { SyncStatus } from "./syncz.ts";

/** A type's cell: istioctl's rule, plus NACKED where edgepilot knows the last word was a NACK. */
export type XdsCell = "NOT SENT" | "SYNCED" | "NACKED" | "STALE (Never Acknowledged)" | "STALE";

/**
 * istioctl's xdsStatus on versions: nothing sent ▶ NOT SENT; sent = acked ▶ SYNCED; otherwise a
 * NACK not followed by an ACK ▶ NACKED (istioctl says STALE: istiod keeps no NACK in syncz);
 * never acked ▶ STALE (Never Acknowledged); else STALE (an answer in flight, or not ACKed yet).
 */
export function xdsCell(sent: string | undefined, acked: string | undefined, nacked: boolean): XdsCell {
  if (sent === undefined || sent === "") return "NOT SENT";
  if (sent === acked) return "SYNCED";
  if (nacked) return "NACKED";
  if (acked === undefined || acked === "") return "STALE (Never Acknowledged)";
  return "STALE";
}

/**
 * The proxy-status columns of `types` as [header, short name, type URL], in istioctl's order: a
 * type without a column (istioctl shows none for SDS) is left out, so the table stays istioctl's.
 */
export function statusColumns<S extends string>(
  types: readonly XdsType<S>[],
): (readonly [header: string, short: S, typeUrl: string])[] {
  return types
    .flatMap((t) => (t.column ? [{ ...t.column, t }] : []))
    .sort((a, b) => a.rank - b.rank)
    .map(({ name, t }) => [name, t.short, t.typeUrl] as const);
}

const columns = statusColumns(xdsTypes);

/** One row's cells. `istiod`: the instance that answered. */
export function statusRow(s: SyncStatus, istiod: string): string[] {
  const nacked = new Set((s.nacks ?? []).map((n) => n.type_url));
  const cells = columns.map(([, short, typeUrl]) =>
    xdsCell(s[`${short}_sent`], s[`${short}_acked`], nacked.has(typeUrl)),
  );
  // istioctl: the proxy's Istio version, else its proxy version marked with "*".
  const version = s.istio_version ?? `${s.proxy_version ?? ""}*`;
  return [s.proxy, s.cluster_id ?? "", ...cells, istiod, version];
}

/** The whole table, header first, rows sorted by cluster then proxy; ends with a newline. */
export function statusTable(rows: readonly SyncStatus[], istiod: string): string {
  const sorted = [...rows].sort(
    (a, b) => cmp(a.cluster_id ?? "", b.cluster_id ?? "") || cmp(a.proxy, b.proxy),
  );
  const header = ["NAME", "CLUSTER", ...columns.map(([c]) => c), "ISTIOD", "VERSION"];
  return tabulate([header, ...sorted.map((s) => statusRow(s, istiod))]);
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Go's tabwriter with minwidth 0, padding 5, padchar ' ' (istioctl's settings): every column but
 * the last as wide as its widest cell plus 5 spaces; the last as it is.
 */
export function tabulate(rows: readonly (readonly string[])[], padding = 5): string {
  const widths: number[] = [];
  for (const row of rows)
    row.forEach((cell, i) => {
      if (i < row.length - 1) widths[i] = Math.max(widths[i] ?? 0, [...cell].length);
    });
  return rows
    .map((row) =>
      row
        .map((cell, i) =>
          i < row.length - 1
            ? cell.padEnd((widths[i] ?? 0) + padding + cell.length - [...cell].length)
            : cell,
        )
        .join(""),
    )
    .map((line) => `${line}\n`)
    .join("");
}
