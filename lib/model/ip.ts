/**
 * IP address syntax as the Kubernetes API server checks it for new objects (k8s.io/utils ip
 * ParseValidIP): Go's netip.ParseAddr — IPv4 as a dotted quad of decimal octets without leading
 * zeros, IPv6 per RFC 4291 text form (hex groups, one "::", an embedded IPv4 tail) — and then no
 * zone (`%eth0`) and no IPv4-mapped IPv6 (`::ffff:1.2.3.4`). Pure, no dependencies.
 */

export type IpFamily = "IPv4" | "IPv6";

/** A parsed address: its family and its bytes (4 or 16), or why the text is not an IP. */
export type IpParse = { ok: true; family: IpFamily; bytes: Uint8Array } | { ok: false; reason: string };

/** Parses `text` as Kubernetes accepts an IP in a new object; the reason names what is wrong. */
export function parseIp(text: string): IpParse {
  if (text === "") return { ok: false, reason: "expected an IP address" };
  const zone = text.indexOf("%");
  const parsed = zone >= 0 ? undefined : parseAddr(text, false);
  if (!parsed) {
    if (zone > 0 && parseIpv6(text.slice(0, zone), false) && zone < text.length - 1) {
      return { ok: false, reason: "IP address with zone value is not allowed" };
    }
    if (zone < 0 && parseAddr(text, true))
      return { ok: false, reason: "IP address should not have leading 0s" };
    if (isCidr(text)) return { ok: false, reason: "expected IP address, got CIDR value" };
    return { ok: false, reason: "not a valid IP address" };
  }
  if (parsed.length === 16 && isIpv4Mapped(parsed)) {
    return { ok: false, reason: "IPv4-mapped IPv6 address is not allowed" };
  }
  return { ok: true, family: parsed.length === 4 ? "IPv4" : "IPv6", bytes: parsed };
}

function parseAddr(text: string, sloppy: boolean): Uint8Array | undefined {
  return text.includes(":") ? parseIpv6(text, sloppy) : parseIpv4(text, sloppy);
}

/** Dotted decimal, exactly four octets 0-255 of 1-3 digits; leading zeros only when `sloppy`. */
function parseIpv4(text: string, sloppy: boolean): Uint8Array | undefined {
  const out = new Uint8Array(4);
  return scanIpv4(text, sloppy, out) ? out : undefined;
}

/**
 * Whether `text` is an IPv4 address Kubernetes accepts (what parseIp accepts as IPv4), without
 * allocating: validation asks it of every endpoint address of a batch.
 */
export function isIpv4(text: string): boolean {
  return scanIpv4(text, false, undefined);
}

/** parseIpv4's scan; writes the octets into `out` when given. */
function scanIpv4(text: string, sloppy: boolean, out: Uint8Array | undefined): boolean {
  let octet = 0;
  let value = 0;
  let digits = 0;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 0x2e;
    if (c === 0x2e) {
      if (digits === 0 || octet === 4) return false;
      if (out) out[octet] = value;
      octet++;
      value = 0;
      digits = 0;
    } else if (c >= 0x30 && c <= 0x39) {
      if (digits === 3 || (digits === 1 && value === 0 && !sloppy)) return false;
      value = value * 10 + (c - 0x30);
      digits++;
      if (value > 255) return false;
    } else return false;
  }
  return octet === 4;
}

/**
 * RFC 4291 section 2.2 text: eight groups of 1-4 hex digits; one "::" standing for at least one
 * zero group; the last 32 bits may be written as a dotted quad.
 */
function parseIpv6(text: string, sloppy: boolean): Uint8Array | undefined {
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const head = halves[0] === "" ? [] : (halves[0] as string).split(":");
  const tail = halves.length === 2 ? (halves[1] === "" ? [] : (halves[1] as string).split(":")) : [];
  const groups: number[] = [];
  const all = [...head, ...tail];
  for (let i = 0; i < all.length; i++) {
    const g = all[i] as string;
    // A dotted quad only as the very last group of the text.
    if (i === all.length - 1 && g.includes(".") && (halves.length === 1 || tail.length > 0)) {
      const v4 = parseIpv4(g, sloppy);
      if (!v4) return undefined;
      groups.push(((v4[0] as number) << 8) | (v4[1] as number), ((v4[2] as number) << 8) | (v4[3] as number));
      continue;
    }
    if (!/^[0-9A-Fa-f]{1,4}$/.test(g)) return undefined;
    groups.push(Number.parseInt(g, 16));
  }
  const compressed = halves.length === 2;
  if (compressed ? groups.length > 7 : groups.length !== 8) return undefined;
  const headGroups = groups.slice(0, head.length);
  const tailGroups = groups.slice(head.length);
  const zeros = 8 - groups.length;
  const full = [...headGroups, ...new Array<number>(zeros).fill(0), ...tailGroups];
  const out = new Uint8Array(16);
  full.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  return out;
}

function isIpv4Mapped(b: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (b[i] !== 0) return false;
  return b[10] === 0xff && b[11] === 0xff;
}

/** netip.ParsePrefix: an address, "/", and a decimal prefix length within its family's bits. */
function isCidr(text: string): boolean {
  const slash = text.indexOf("/");
  if (slash < 0) return false;
  const addr = parseAddr(text.slice(0, slash), true);
  const bits = text.slice(slash + 1);
  if (!addr || !/^(0|[1-9][0-9]{0,2})$/.test(bits)) return false;
  return Number(bits) <= addr.length * 8;
}

/** A parsed CIDR range: the network's bytes (host bits cleared) and its prefix length. */
export interface CidrRange {
  family: IpFamily;
  bytes: Uint8Array;
  bits: number;
}

/**
 * Parses `a.b.c.d/n` or `x::y/n` as Go's net.ParseCIDR does (what istiod reads MeshNetworks'
 * fromCidr with): host bits are cleared, so `10.1.2.3/8` is the range 10.0.0.0/8. Undefined otherwise.
 */
export function parseCidr(text: string): CidrRange | undefined {
  const slash = text.indexOf("/");
  if (slash < 0) return undefined;
  const ip = parseIp(text.slice(0, slash));
  const bits = text.slice(slash + 1);
  if (!ip.ok || !/^(0|[1-9][0-9]{0,2})$/.test(bits) || Number(bits) > ip.bytes.length * 8) return undefined;
  const n = Number(bits);
  const bytes = ip.bytes.slice();
  for (let i = 0; i < bytes.length; i++) {
    const keep = Math.max(0, Math.min(8, n - 8 * i));
    bytes[i] = (bytes[i] as number) & ((0xff00 >> keep) & 0xff);
  }
  return { family: ip.family, bytes, bits: n };
}

/** Whether the address `ip` (parseIp's bytes) lies in `range`; an address of the other family never does. */
export function cidrContains(range: CidrRange, ip: Uint8Array): boolean {
  if (ip.length !== range.bytes.length) return false;
  for (let i = 0; 8 * i < range.bits; i++) {
    const keep = Math.min(8, range.bits - 8 * i);
    const mask = (0xff00 >> keep) & 0xff;
    if (((ip[i] as number) & mask) !== range.bytes[i]) return false;
  }
  return true;
}
