/**
 * An IP or CIDR text as the Envoy CidrRange istiod writes for it (pilot/pkg/networking/util
 * AddrStrToCidrRange): a bare address is a /32 or /128, the address is printed in Go's canonical
 * form (netip.Addr.String, RFC 5952 for IPv6) and a prefix's host bits are kept, not masked.
 */
import { create } from "@bufbuild/protobuf";
import { type CidrRange, CidrRangeSchema } from "../../gen/envoy/config/core/v3/address_pb.ts";
import { parseIp } from "../../model/ip.ts";

/** The CidrRange of `text`, or an Error naming why the text is not an address or prefix. */
export function cidrRange(text: string): CidrRange | Error {
  if (text === "") return new Error("empty address");
  const slash = text.indexOf("/");
  const ip = parseIp(slash < 0 ? text : text.slice(0, slash));
  if (!ip.ok) return new Error(`invalid address ${JSON.stringify(text)}: ${ip.reason}`);
  const max = ip.bytes.length * 8;
  let bits = max;
  if (slash >= 0) {
    const b = text.slice(slash + 1);
    if (!/^(0|[1-9][0-9]{0,2})$/.test(b) || Number(b) > max)
      return new Error(`invalid prefix length in ${text}`);
    bits = Number(b);
  }
  return create(CidrRangeSchema, { addressPrefix: formatIp(ip.bytes), prefixLen: bits });
}

/** Go's netip.Addr.String for 4 or 16 bytes: dotted quad, or RFC 5952 IPv6 (longest zero run as "::"). */
export function formatIp(bytes: Uint8Array): string {
  if (bytes.length === 4) return [...bytes].join(".");
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] as number) << 8) | (bytes[i + 1] as number));
  // The first longest run of two or more zero groups is written "::".
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (g: number[]) => g.map((x) => x.toString(16)).join(":");
  if (best < 0) return hex(groups);
  return `${hex(groups.slice(0, best))}::${hex(groups.slice(best + bestLen))}`;
}
