/**
 * RE2 (Go regexp/syntax) escapes and character classes, for regex.ts: Go's parseEscape, Perl and
 * Unicode classes, POSIX `[:name:]` classes and ordered ranges. Each returns the index after what
 * it read, or the problem as Go words it.
 */

const posixClasses = new Set([
  "alnum",
  "alpha",
  "ascii",
  "blank",
  "cntrl",
  "digit",
  "graph",
  "lower",
  "print",
  "punct",
  "space",
  "upper",
  "word",
  "xdigit",
]);

/** An ASCII decimal digit (Go's parseInt reads only these). */
export const isDigit = (c: string | undefined) => c !== undefined && c >= "0" && c <= "9";
const isOctal = (c: string | undefined) => c !== undefined && c >= "0" && c <= "7";
const isHex = (c: string | undefined) => c !== undefined && /^[0-9A-Fa-f]$/.test(c);
const isAlnum = (c: string) => /^[A-Za-z0-9]$/.test(c);

/** An escape outside a class: Go's assertions, `\Q...\E`, classes, then parseEscape. */
export function escapeOutsideClass(chars: string[], i: number): number | string {
  const c = chars[i + 1];
  if (c === undefined) return "trailing backslash at end of expression";
  if ("AbBz".includes(c)) return i + 2;
  if (c === "C") return `invalid escape sequence: \`\\C\``;
  if (c === "Q") {
    // Literal text up to `\E` or the end of the expression.
    for (let j = i + 2; j < chars.length - 1; j++)
      if (chars[j] === "\\" && chars[j + 1] === "E") return j + 2;
    return chars.length;
  }
  return classEscape(chars, i);
}

/** Escapes valid both inside and outside a class: `\d \s \w` (and negations), `\p`, then parseEscape. */
function classEscape(chars: string[], i: number): number | string {
  const c = chars[i + 1];
  if (c === undefined) return "trailing backslash at end of expression";
  if ("dDsSwW".includes(c)) return i + 2;
  if (c === "p" || c === "P") {
    const n = chars[i + 2];
    if (n === "{") {
      const end = chars.indexOf("}", i + 3);
      const name = end < 0 ? "" : chars.slice(i + 3, end).join("");
      if (end < 0 || !/^\^?[A-Za-z_]+$/.test(name))
        return `invalid character class range: \`${chars.slice(i, end < 0 ? chars.length : end + 1).join("")}\``;
      return end + 1;
    }
    if (n !== undefined && "CLMNPSZ".includes(n)) return i + 3;
    return `invalid character class range: \`${chars.slice(i, i + 3).join("")}\``;
  }
  return parseEscape(chars, i);
}

/** Go's parseEscape: octal, `\x`, the C escapes and ASCII punctuation; anything else is invalid. */
function parseEscape(chars: string[], i: number): number | string {
  const c = chars[i + 1] as string;
  const bad = (end: number) => `invalid escape sequence: \`${chars.slice(i, end).join("")}\``;
  if (c >= "1" && c <= "7" && !isOctal(chars[i + 2])) return bad(i + 2); // a backreference
  if (isOctal(c)) {
    let j = i + 2;
    while (j < i + 4 && isOctal(chars[j])) j++;
    return j;
  }
  if (c === "x") {
    if (chars[i + 2] === "{") {
      let j = i + 3;
      let hex = "";
      while (isHex(chars[j])) hex += chars[j++];
      if (chars[j] !== "}" || hex === "" || Number.parseInt(hex, 16) > 0x10ffff) return bad(j + 1);
      return j + 1;
    }
    if (isHex(chars[i + 2]) && isHex(chars[i + 3])) return i + 4;
    return bad(i + 4);
  }
  if ("afnrtv".includes(c)) return i + 2;
  if (c.codePointAt(0)! < 0x80 && !isAlnum(c)) return i + 2;
  return bad(i + 2);
}

/** A class `[...]`: POSIX names, escapes, ordered ranges; returns the index after `]`. */
export function charClass(chars: string[], start: number): number | string {
  let i = start + 1;
  if (chars[i] === "^") i++;
  let first = true;
  while (i < chars.length && (chars[i] !== "]" || first)) {
    first = false;
    if (chars[i] === "[" && chars[i + 1] === ":") {
      const text = chars.slice(i).join("");
      const end = text.indexOf(":]", 2);
      if (end >= 0) {
        const name = text.slice(2, end).replace(/^\^/, "");
        if (!posixClasses.has(name)) return `invalid character class range: \`${text.slice(0, end + 2)}\``;
        i += Array.from(text.slice(0, end + 2)).length;
        continue;
      }
    }
    if (chars[i] === "\\" && "dDsSwWpP".includes(chars[i + 1] ?? "")) {
      const r = classEscape(chars, i);
      if (typeof r === "string") return r;
      i = r;
      continue;
    }
    const lo = classChar(chars, i);
    if (typeof lo === "string") return lo;
    i = lo.next;
    if (chars[i] === "-" && chars[i + 1] !== "]" && i + 1 < chars.length) {
      const hi = classChar(chars, i + 1);
      if (typeof hi === "string") return hi;
      if (hi.code < lo.code)
        return `invalid character class range: \`${chars.slice(lo.start, hi.next).join("")}\``;
      i = hi.next;
    }
  }
  if (i >= chars.length) return `missing closing ]: \`${chars.slice(start).join("")}\``;
  return i + 1;
}

/** One character of a class (a literal or an escape) with its code point. */
function classChar(chars: string[], i: number): { code: number; next: number; start: number } | string {
  if (i >= chars.length) return `missing closing ]: \`${chars.join("")}\``;
  if (chars[i] !== "\\") return { code: (chars[i] as string).codePointAt(0) ?? 0, next: i + 1, start: i };
  const r = parseEscape(chars, i);
  if (typeof r === "string") return r;
  return { code: escapedCode(chars.slice(i, r).join("")), next: r, start: i };
}

function escapedCode(esc: string): number {
  const body = esc.slice(1);
  if (/^[0-7]+$/.test(body)) return Number.parseInt(body, 8);
  if (body.startsWith("x{")) return Number.parseInt(body.slice(2, -1), 16);
  if (body.startsWith("x")) return Number.parseInt(body.slice(1), 16);
  const c: Record<string, number> = { a: 7, f: 12, n: 10, r: 13, t: 9, v: 11 };
  return c[body] ?? body.codePointAt(0) ?? 0;
}
