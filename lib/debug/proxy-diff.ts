/**
 * What `edgepilot proxy-status <proxy>` prints for one proxy: per type, whether what the proxy
 * was sent (its record, through /debug/config_dump) is what is published now, as istioctl's
 * "Clusters Match" / "Listeners Don't Match" lines, each mismatch on a line of its own. Pure.
 */
import { xdsType } from "../resources/xds-types.ts";
import type { DumpType } from "./config-dump.ts";

/** The lines for one proxy's dump types; ends with a newline. */
export function proxyDiff(proxy: string, types: readonly DumpType[]): string {
  const lines: string[] = [`Proxy ${proxy}`];
  for (const t of types) {
    const title = xdsType(t.type_url)?.title ?? t.type_url;
    const differ = t.resources.filter((r) => r.sent !== r.published);
    const nacked = t.nack !== undefined && t.version_sent !== t.version_acked;
    const partial =
      t.sent_count > t.resources.length
        ? ` (compared the first ${t.resources.length} of ${t.sent_count} resources sent)`
        : "";
    if (t.version_sent === undefined) {
      lines.push(`${title} Not Sent`);
      continue;
    }
    lines.push(`${title} ${differ.length === 0 && !nacked ? "Match" : "Don't Match"}${partial}`);
    if (nacked && t.nack)
      lines.push(`  ! NACKed (kept ${t.nack.version_info || "nothing"}): ${t.nack.message}`);
    for (const r of differ)
      lines.push(
        r.published === null
          ? `  - ${r.name}: sent ${r.sent}, no longer published`
          : `  ~ ${r.name}: sent ${r.sent}, published ${r.published}`,
      );
  }
  return lines.map((l) => `${l}\n`).join("");
}
