/**
 * RE2 syntax as istiod checks a regex (Go's regexp.Compile, Perl flags) before Envoy or gRPC ever
 * sees it: a pure syntax checker, never JavaScript's RegExp, so what RE2 refuses and JS accepts
 * (lookarounds, backreferences, `\u`, `\c`, `[\b]`, possessive `*+`) is refused here too.
 * Approximations, stated: Unicode class names in `\p{...}` are checked for shape, not looked up.
 */

import { utf8Length } from "../../utf8.ts";
import { charClass, escapeOutsideClass, isDigit } from "./regex-escape.ts";

/** Istio's limit on a regex's length in bytes (it approximates Envoy's RE2 program size). */
export const maxRegexLength = 1024;
const maxRepeat = 1000;

interface Frame {
  /** A repeatable operand ends the current alternative. */
  operand: boolean;
  /** The last token was a repetition operator (Go refuses `a**`, `a*+`, `a{2}{3}`). */
  lastRepeat: boolean;
  /** Repeat factor of the last operand and the largest inside the frame (Go's repeatIsValid). */
  atomFactor: number;
  maxFactor: number;
}

/** Why `re` is not a valid RE2 (Go) regex, or undefined when it is. Messages follow Go's. */
export function re2Problem(re: string): string | undefined {
  if (utf8Length(re) > maxRegexLength) return `regex is too large, max length allowed is ${maxRegexLength}`;
  const chars = Array.from(re);
  const names = new Set<string>();
  const stack: Frame[] = [frame()];
  let i = 0;
  const top = () => stack[stack.length - 1] as Frame;
  const operand = (factor = 1) => {
    const f = top();
    f.operand = true;
    f.lastRepeat = false;
    f.atomFactor = factor;
    f.maxFactor = Math.max(f.maxFactor, factor);
  };
  while (i < chars.length) {
    const c = chars[i] as string;
    switch (c) {
      case "(": {
        if (chars[i + 1] === "?") {
          const r = perlGroup(chars, i, names);
          if (typeof r === "string") return r;
          i = r.next;
          if (r.opensGroup) stack.push(frame());
          else top().lastRepeat = false; // `(?i)` only sets flags
          continue;
        }
        stack.push(frame());
        i++;
        continue;
      }
      case ")": {
        if (stack.length === 1) return "unexpected ): `)`";
        const inner = stack.pop() as Frame;
        operand(Math.max(1, inner.maxFactor));
        i++;
        continue;
      }
      case "|":
        top().operand = false;
        top().lastRepeat = false;
        i++;
        continue;
      case "*":
      case "+":
      case "?": {
        const lazy = chars[i + 1] === "?" ? 1 : 0;
        const op = chars.slice(i, i + 1 + lazy).join("");
        const p = repeat(top(), op, -1, -1);
        if (p) return p;
        i += 1 + lazy;
        continue;
      }
      case "{": {
        const r = parseRepeat(chars, i);
        if (!r) {
          operand(); // not a repetition: `{` is a literal
          i++;
          continue;
        }
        const op = chars.slice(i, r.next).join("");
        if (r.min < 0 || r.min > maxRepeat || r.max > maxRepeat || (r.max >= 0 && r.min > r.max))
          return `invalid repeat count: \`${op}\``;
        const lazy = chars[r.next] === "?" ? 1 : 0;
        const p = repeat(top(), op + (lazy ? "?" : ""), r.min, r.max);
        if (p) return p;
        i = r.next + lazy;
        continue;
      }
      case "[": {
        const r = charClass(chars, i);
        if (typeof r === "string") return r;
        operand();
        i = r;
        continue;
      }
      case "\\": {
        const r = escapeOutsideClass(chars, i);
        if (typeof r === "string") return r;
        operand();
        i = r;
        continue;
      }
      default:
        operand(); // literals, `.`, `^`, `$` (Go lets an empty-width assertion repeat)
        i++;
    }
  }
  if (stack.length > 1) return `missing closing ): \`${re}\``;
  return undefined;
}

function frame(): Frame {
  return { operand: false, lastRepeat: false, atomFactor: 0, maxFactor: 0 };
}

/** Applies a repetition to the last operand: Go's missing-argument, nesting and size rules. */
function repeat(f: Frame, op: string, min: number, max: number): string | undefined {
  if (f.lastRepeat) return `invalid nested repetition operator: \`${op}\``;
  if (!f.operand) return `missing argument to repetition operator: \`${op}\``;
  if (min >= 2 || max >= 2) {
    const m = max >= 0 ? max : min;
    if (m > 0 && f.atomFactor * m > maxRepeat) return `invalid repeat count: \`${op}\``;
    f.atomFactor = m > 0 ? f.atomFactor * m : f.atomFactor;
    f.maxFactor = Math.max(f.maxFactor, f.atomFactor);
  }
  f.lastRepeat = true;
  return undefined;
}

/** `{n}`, `{n,}`, `{n,m}` (no leading zeros), or undefined when `{` is a literal. */
function parseRepeat(chars: string[], i: number): { min: number; max: number; next: number } | undefined {
  let j = i + 1;
  const int = (): number | undefined => {
    if (!isDigit(chars[j])) return undefined;
    if (chars[j] === "0" && isDigit(chars[j + 1])) return undefined;
    let n = 0;
    while (isDigit(chars[j])) {
      n = n >= 1e8 ? -1 : n < 0 ? n : n * 10 + Number(chars[j]);
      j++;
    }
    return n;
  };
  const min = int();
  if (min === undefined) return undefined;
  let max = min;
  if (chars[j] === ",") {
    j++;
    if (chars[j] === "}") max = -1;
    else {
      const m = int();
      if (m === undefined) return undefined;
      max = m;
    }
  }
  if (chars[j] !== "}") return undefined;
  return { min, max, next: j + 1 };
}

/** `(?` groups: named captures and flag groups; lookarounds and the rest are refused as Go does. */
function perlGroup(
  chars: string[],
  i: number,
  names: Set<string>,
): { next: number; opensGroup: boolean } | string {
  const rest = chars.slice(i).join("");
  if (rest.startsWith("(?P<") || rest.startsWith("(?<")) {
    const begin = rest.startsWith("(?P<") ? 4 : 3;
    const end = rest.indexOf(">");
    const name = end < 0 ? "" : rest.slice(begin, end);
    if (end < 0 || !/^[A-Za-z0-9_]+$/.test(name))
      return `invalid named capture: \`${end < 0 ? rest : rest.slice(0, end + 1)}\``;
    if (names.has(name)) return `duplicate capture group name: \`${name}\``;
    names.add(name);
    return { next: i + Array.from(rest.slice(0, end + 1)).length, opensGroup: true };
  }
  let j = i + 2;
  let negated = false;
  let sawFlag = false;
  while (j < chars.length) {
    const c = chars[j] as string;
    j++;
    if ("imsU".includes(c)) sawFlag = true;
    else if (c === "-" && !negated) {
      negated = true;
      sawFlag = false;
    } else if (c === ":" || c === ")") {
      if (negated && !sawFlag) break;
      return { next: j, opensGroup: c === ":" };
    } else break;
  }
  return `invalid or unsupported Perl syntax: \`${chars.slice(i, j).join("")}\``;
}
