/**
 * String and bytes rules of protoc-gen-validate with its semantics (bufbuild/protoc-gen-validate
 * templates/goshared/string.go, bytes.go, known.go; templates/cc/string.go for what Envoy runs):
 * len/min_len/max_len count Unicode code points, *_bytes count UTF-8 bytes, `pattern` is an RE2
 * full match (cc: RE2::FullMatch), `ignore_empty` skips "" (and empty bytes), and the well-known
 * formats follow the Go validators (net.ParseIP, the hostname rules of known.go, url.Parse).
 */
import type { BytesRules, StringRules } from "../../../lib/gen/validate/validate_pb.ts";
import { KnownRegex } from "../../../lib/gen/validate/validate_pb.ts";
import { re2FullMatch } from "./re2.ts";
import { own, type PathLike, type Sink, show } from "./shared.ts";

const utf8 = new TextEncoder();
const decoder = new TextDecoder();

/**
 * PGV's header regexes (validate.proto's KnownRegex; the same expressions as the Go/C++ templates,
 * mirrored e.g. by scalapb-validate's WellKnownRegex): strict RFC 7230 name and value, and the loose
 * form `strict: false` selects (no NUL, CR or LF).
 */
export const headerRegex = {
  name: /^:?[0-9a-zA-Z!#$%&'*+-.^_|~`]+$/,
  // biome-ignore lint/suspicious/noControlCharactersInRegex: header and URL rules are about control characters
  value: /^[^\u0000-\u0008\u000A-\u001F\u007F]*$/,
  // biome-ignore lint/suspicious/noControlCharactersInRegex: header and URL rules are about control characters
  loose: /^[^\u0000\u000A\u000D]*$/,
} as const;

/** known.go's _validateHostname: <= 253 chars, dot-separated labels of 1-63 [a-z0-9-], no edge hyphen. */
export function isHostname(host: string): boolean {
  if (host.length > 253) return false;
  const s = (host.endsWith(".") ? host.slice(0, -1) : host).toLowerCase();
  return s
    .split(".")
    .every((part) => part.length > 0 && part.length <= 63 && /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/.test(part));
}

/** Go's net.ParseIP for dotted IPv4 (four decimal octets, no leading zeros beyond one digit). */
export function isIpv4(s: string): boolean {
  const parts = s.split(".");
  return parts.length === 4 && parts.every((p) => /^(0|[1-9][0-9]{0,2})$/.test(p) && Number(p) <= 255);
}

/** Go's net.ParseIP for IPv6 text (hex groups, at most one `::`, an IPv4 tail allowed; no zone) as 16 bytes. */
export function parseIpv6(s: string): number[] | undefined {
  if (!s.includes(":")) return undefined;
  let text = s;
  const tail = s.slice(s.lastIndexOf(":") + 1);
  if (tail.includes(".")) {
    if (!isIpv4(tail)) return undefined;
    const [a, b, c, d] = tail.split(".").map(Number) as [number, number, number, number];
    text = `${s.slice(0, s.lastIndexOf(":") + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const parts = halves.map((h) => (h === "" ? [] : h.split(":")));
  const all = parts.flat();
  if (!all.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return undefined;
  if (halves.length === 2 ? all.length > 7 : all.length !== 8) return undefined;
  const head = parts[0] as string[];
  const rest = parts[1] ?? [];
  const groups = [...head, ...Array(8 - all.length).fill("0"), ...rest].map((g) => Number.parseInt(g, 16));
  return groups.flatMap((g) => [g >> 8, g & 0xff]);
}

/** Go's `ParseIP(s).To4() != nil` for IPv6 text: ten zero bytes then 0xffff (a v4-mapped address). */
function isV4Mapped(b: number[]): boolean {
  return b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;
}

const isIp = (s: string) => isIpv4(s) || parseIpv6(s) !== undefined;
/** Go's ipv6 rule, `ip != nil && ip.To4() == nil`: a v4-mapped address is not IPv6. */
const isIpv6 = (s: string) => {
  const b = parseIpv6(s);
  return b !== undefined && !isV4Mapped(b);
};

/** Go's net/mail address part as PGV's _validateEmail checks it: local <= 64, total <= 254, hostname domain. */
export function isEmail(s: string): boolean {
  const angle = /<([^<>]*)>\s*$/.exec(s);
  const addr = angle ? (angle[1] as string) : s.trim();
  const at = addr.lastIndexOf("@");
  if (at <= 0 || addr.length > 254) return false;
  const local = addr.slice(0, at);
  if (local.length > 64 || !/^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+$/.test(local)) return false;
  return isHostname(addr.slice(at + 1));
}

/** Go's url.Parse succeeds (no control characters, no space in the host, a valid %-escape everywhere). */
function parsesAsUrl(s: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: header and URL rules are about control characters
  if (/[\u0000-\u001f\u007f]/.test(s)) return false;
  if (/%(?![0-9a-fA-F]{2})/.test(s)) return false;
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(s);
  if (!m && /^[^/?#]*:/.test(s)) return false; // "missing protocol scheme"
  return !/\s/.test(s.replace(/[?#].*$/, ""));
}

/** uri: url.Parse succeeds and the URL is absolute (has a scheme). */
export const isUri = (s: string) => parsesAsUrl(s) && /^[A-Za-z][A-Za-z0-9+.-]*:/.test(s);
/** uri_ref: url.Parse succeeds. */
export const isUriRef = parsesAsUrl;
/** known.go's _validateUuid: 36 chars, hyphens at 8, 13, 18, 23, hex elsewhere. */
export const isUuid = (s: string) =>
  /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(s);

/** Every StringRules check of `value`. */
export function checkString(value: string, r: StringRules, path: PathLike, sink: Sink): void {
  if (own(r, "ignoreEmpty") && value === "") return;
  const bad = (rule: string) => sink(path, `string.${rule}`, value);
  const c = own(r, "const");
  if (c !== undefined && value !== c) bad(`const ${show(c)}`);
  if (r.in.length > 0 && !r.in.includes(value)) bad(`in ${show(r.in)}`);
  if (r.notIn.includes(value)) bad(`not_in ${show(r.notIn)}`);
  const len = own(r, "len");
  const minLen = own(r, "minLen");
  const maxLen = own(r, "maxLen");
  if (len !== undefined || minLen !== undefined || maxLen !== undefined) {
    // Code points, as utf8.RuneCountInString: only counted when a rule needs them.
    const runes = BigInt(value.length === 0 ? 0 : [...value].length);
    if (len !== undefined && runes !== len) bad(`len ${len}`);
    if (minLen !== undefined && runes < minLen) bad(`min_len ${minLen}`);
    if (maxLen !== undefined && runes > maxLen) bad(`max_len ${maxLen}`);
  }
  const lenBytes = own(r, "lenBytes");
  const minBytes = own(r, "minBytes");
  const maxBytes = own(r, "maxBytes");
  const byteRule = lenBytes !== undefined || minBytes !== undefined || maxBytes !== undefined;
  const bytes = byteRule ? BigInt(utf8.encode(value).length) : 0n;
  if (lenBytes !== undefined && bytes !== lenBytes) bad(`len_bytes ${lenBytes}`);
  if (minBytes !== undefined && bytes < minBytes) bad(`min_bytes ${minBytes}`);
  if (maxBytes !== undefined && bytes > maxBytes) bad(`max_bytes ${maxBytes}`);
  const prefix = own(r, "prefix");
  const suffix = own(r, "suffix");
  const contains = own(r, "contains");
  const notContains = own(r, "notContains");
  if (prefix !== undefined && !value.startsWith(prefix)) bad(`prefix ${show(prefix)}`);
  if (suffix !== undefined && !value.endsWith(suffix)) bad(`suffix ${show(suffix)}`);
  if (contains !== undefined && !value.includes(contains)) bad(`contains ${show(contains)}`);
  if (notContains !== undefined && value.includes(notContains)) bad(`not_contains ${show(notContains)}`);
  const pattern = own(r, "pattern");
  if (pattern !== undefined && !re2FullMatch(pattern).test(value)) bad(`pattern ${show(pattern)}`);
  const wk = r.wellKnown;
  switch (wk.case) {
    case undefined:
      return;
    case "wellKnownRegex": {
      // `strict` defaults to true (validate.proto); false relaxes both to "no NUL, CR, LF".
      const strict = own(r, "strict") ?? true;
      const re =
        wk.value === KnownRegex.HTTP_HEADER_NAME
          ? strict
            ? headerRegex.name
            : headerRegex.loose
          : wk.value === KnownRegex.HTTP_HEADER_VALUE
            ? strict
              ? headerRegex.value
              : headerRegex.loose
            : undefined;
      if (re && !re.test(value))
        bad(`well_known_regex ${KnownRegex[wk.value]}${strict ? "" : " (strict: false)"}`);
      return;
    }
    default: {
      if (!wk.value) return;
      const ok = {
        email: isEmail,
        hostname: isHostname,
        ip: isIp,
        ipv4: (s: string) =>
          isIpv4(s) || (parseIpv6(s) !== undefined && isV4Mapped(parseIpv6(s) as number[])),
        ipv6: isIpv6,
        uri: isUri,
        uriRef: isUriRef,
        address: (s: string) => isHostname(s) || isIp(s),
        uuid: isUuid,
      }[wk.case];
      if (!ok(value)) bad(snake(wk.case));
    }
  }
}

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Every BytesRules check of `value` (lengths in bytes; pattern over the UTF-8 text, as RE2 reads it). */
export function checkBytes(value: Uint8Array, r: BytesRules, path: PathLike, sink: Sink): void {
  if (own(r, "ignoreEmpty") && value.length === 0) return;
  const bad = (rule: string) => sink(path, `bytes.${rule}`, value);
  const hex = (b: Uint8Array) => show(b);
  const eq = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);
  const c = own(r, "const");
  if (c !== undefined && !eq(value, c)) bad(`const ${hex(c)}`);
  if (r.in.length > 0 && !r.in.some((x) => eq(x, value))) bad(`in [${r.in.map(hex).join(", ")}]`);
  if (r.notIn.some((x) => eq(x, value))) bad(`not_in [${r.notIn.map(hex).join(", ")}]`);
  const n = BigInt(value.length);
  const len = own(r, "len");
  const minLen = own(r, "minLen");
  const maxLen = own(r, "maxLen");
  if (len !== undefined && n !== len) bad(`len ${len}`);
  if (minLen !== undefined && n < minLen) bad(`min_len ${minLen}`);
  if (maxLen !== undefined && n > maxLen) bad(`max_len ${maxLen}`);
  const at = (needle: Uint8Array, i: number) => needle.every((x, k) => value[i + k] === x);
  const prefix = own(r, "prefix");
  const suffix = own(r, "suffix");
  const contains = own(r, "contains");
  if (prefix !== undefined && !(value.length >= prefix.length && at(prefix, 0))) bad(`prefix ${hex(prefix)}`);
  if (suffix !== undefined && !(value.length >= suffix.length && at(suffix, value.length - suffix.length)))
    bad(`suffix ${hex(suffix)}`);
  if (
    contains !== undefined &&
    !Array.from({ length: Math.max(0, value.length - contains.length + 1) }, (_, i) => i).some((i) =>
      at(contains, i),
    )
  )
    bad(`contains ${hex(contains)}`);
  const pattern = own(r, "pattern");
  if (pattern !== undefined && !re2FullMatch(pattern).test(decoder.decode(value)))
    bad(`pattern ${show(pattern)}`);
  const wk = r.wellKnown;
  if (wk.case && wk.value) {
    // bytes.go: ip is 4 or 16 bytes, ipv4 exactly 4, ipv6 exactly 16.
    const ok =
      wk.case === "ip"
        ? value.length === 4 || value.length === 16
        : value.length === (wk.case === "ipv4" ? 4 : 16);
    if (!ok) bad(wk.case);
  }
}
