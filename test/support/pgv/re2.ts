/**
 * RE2 patterns (protoc-gen-validate's `string.pattern`, `bytes.pattern`) as JavaScript RegExps with
 * RE2's meaning, matched as Envoy's C++ validators do: RE2::FullMatch, the whole value
 * (bufbuild/protoc-gen-validate templates/cc/string.go). Syntax: github.com/google/re2/wiki/Syntax.
 * What JS cannot mean the same way (\C, octal beyond \0, `(?U)`, negated POSIX classes, \S inside
 * a class, repeat counts over RE2's 1000) throws an Error naming the construct: never a silent
 * approximation.
 */

const compiled = new Map<string, RegExp>();

/** The anchored RegExp for an RE2 pattern; throws if the pattern has no exact JS equivalent. */
export function re2FullMatch(pattern: string): RegExp {
  let re = compiled.get(pattern);
  if (!re) {
    const { body, flags } = translate(pattern);
    try {
      re = new RegExp(`^(?:${body})$`, `u${flags}`);
    } catch (e) {
      throw unsupported(pattern, `JavaScript refuses the translation ${JSON.stringify(body)}: ${String(e)}`);
    }
    compiled.set(pattern, re);
  }
  return re;
}

function unsupported(pattern: string, what: string): Error {
  return new Error(`RE2 pattern ${JSON.stringify(pattern)}: ${what}`);
}

const lit = (c: string) => `\\u{${(c.codePointAt(0) as number).toString(16)}}`;
const posix: Record<string, string> = {
  alnum: "0-9A-Za-z",
  alpha: "A-Za-z",
  ascii: "\\x00-\\x7f",
  blank: "\\t ",
  cntrl: "\\x00-\\x1f\\x7f",
  digit: "0-9",
  graph: "!-~",
  lower: "a-z",
  print: " -~",
  punct: "!-\\/:-@\\[-`\\{-~",
  space: "\\t\\n\\v\\f\\r ",
  upper: "A-Z",
  word: "0-9A-Za-z_",
  xdigit: "0-9A-Fa-f",
};

/** `\pL`, `\p{Greek}`, `\P{^Lu}` ─▶ a JS property escape (general categories as is, others as scripts). */
function property(p: string, i: number, negated: boolean): { out: string; next: number } {
  let name: string;
  let next: number;
  if (p[i] === "{") {
    const end = p.indexOf("}", i);
    if (end < 0) throw unsupported(p, "an unterminated \\p{");
    name = p.slice(i + 1, end);
    next = end + 1;
  } else {
    name = p[i] ?? "";
    next = i + 1;
  }
  if (name.startsWith("^")) {
    negated = !negated;
    name = name.slice(1);
  }
  const js = name === "Any" || /^[A-Z][a-z]?$/.test(name) ? name : `Script=${name}`;
  return { out: `\\${negated ? "P" : "p"}{${js}}`, next };
}

/** One escape at p[i] (just after the backslash); `inClass` changes what \s and \S may become. */
function escapeAt(p: string, i: number, inClass: boolean): { out: string; next: number } {
  const c = p[i];
  if (c === undefined) throw unsupported(p, "a trailing backslash");
  if ("dDwW".includes(c)) return { out: `\\${c}`, next: i + 1 };
  if (!inClass && "bB".includes(c)) return { out: `\\${c}`, next: i + 1 };
  if (c === "s") return { out: inClass ? "\\t\\n\\f\\r " : "[\\t\\n\\f\\r ]", next: i + 1 };
  if (c === "S") {
    if (inClass) throw unsupported(p, "\\S inside a character class");
    return { out: "[^\\t\\n\\f\\r ]", next: i + 1 };
  }
  if (!inClass && c === "A") return { out: "^", next: i + 1 };
  if (!inClass && c === "z") return { out: "$", next: i + 1 };
  if (c === "p" || c === "P") return property(p, i + 1, c === "P");
  if (c === "a") return { out: "\\x07", next: i + 1 };
  if ("ftnrv".includes(c)) return { out: `\\${c}`, next: i + 1 };
  if (c === "x") {
    if (p[i + 1] === "{") {
      const end = p.indexOf("}", i);
      if (end < 0) throw unsupported(p, "an unterminated \\x{");
      return { out: `\\u{${p.slice(i + 2, end)}}`, next: end + 1 };
    }
    const hex = p.slice(i + 1, i + 3);
    if (!/^[0-9a-fA-F]{2}$/.test(hex)) throw unsupported(p, "a \\x escape without two hex digits");
    return { out: `\\x${hex}`, next: i + 3 };
  }
  if (c === "0") {
    const m = /^0[0-7]{0,2}/.exec(p.slice(i)) as RegExpExecArray;
    return { out: `\\u{${Number.parseInt(m[0], 8).toString(16)}}`, next: i + m[0].length };
  }
  if (c === "Q") {
    const end = p.indexOf("\\E", i + 1);
    const text = p.slice(i + 1, end < 0 ? p.length : end);
    return { out: [...text].map(lit).join(""), next: end < 0 ? p.length : end + 2 };
  }
  if (/[^0-9A-Za-z]/.test(c)) return { out: lit(c), next: i + 1 };
  throw unsupported(p, `the escape \\${c}`);
}

interface Scope {
  s: boolean;
  m: boolean;
}

/** RE2 syntax ─▶ the body and flags of an equivalent JS RegExp (u mode). */
function translate(p: string): { body: string; flags: string } {
  let flags = "";
  const scope: Scope = { s: false, m: false };
  let i = 0;
  const lead = /^\(\?([a-zA-Z]+)\)/.exec(p);
  if (lead) {
    for (const f of lead[1] as string) {
      if (f === "i") flags = "i";
      else if (f === "s") scope.s = true;
      else if (f === "m") scope.m = true;
      else throw unsupported(p, `the flag (?${f})`);
    }
    i = lead[0].length;
  }
  let out = "";
  while (i < p.length) {
    const c = p[i] as string;
    if (c === "\\") {
      const e = escapeAt(p, i + 1, false);
      out += e.out;
      i = e.next;
    } else if (c === "[") {
      const k = charClass(p, i);
      out += k.out;
      i = k.next;
    } else if (c === ".") {
      out += scope.s ? "[\\s\\S]" : "[^\\n]";
      i++;
    } else if (c === "^") {
      out += scope.m ? "(?<=^|\\n)" : "^";
      i++;
    } else if (c === "$") {
      out += scope.m ? "(?=\\n|$)" : "$";
      i++;
    } else if (c === "(") {
      const g = group(p, i);
      out += g.out;
      i = g.next;
    } else if (c === "{") {
      const rep = /^\{(\d+)(,(\d*))?\}/.exec(p.slice(i));
      if (rep) {
        for (const n of [rep[1], rep[3]])
          if (n && Number(n) > 1000) throw unsupported(p, `the repeat count ${n} (RE2's limit is 1000)`);
        out += rep[0];
        i += rep[0].length;
      } else {
        out += "\\{";
        i++;
      }
    } else if (c === "}" || c === "]") {
      out += `\\${c}`;
      i++;
    } else {
      const cp = p.codePointAt(i) as number;
      const ch = String.fromCodePoint(cp);
      out += ch;
      i += ch.length;
    }
  }
  return { body: out, flags };
}

/** A group opener at p[i]: plain, non-capturing, named, or with the case flag only. */
function group(p: string, i: number): { out: string; next: number } {
  const rest = p.slice(i);
  if (!rest.startsWith("(?")) return { out: "(", next: i + 1 };
  if (rest.startsWith("(?:")) return { out: "(?:", next: i + 3 };
  const named = /^\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>/.exec(rest);
  if (named) return { out: `(?<${named[1]}>`, next: i + named[0].length };
  const flagged = /^\(\?(-?i):/.exec(rest);
  if (flagged) return { out: `(?${flagged[1]}:`, next: i + flagged[0].length };
  throw unsupported(
    p,
    `the group ${JSON.stringify(rest.slice(0, 6))} (lookaround is not RE2; flags other than i are only supported leading)`,
  );
}

/** A character class at p[i] ('['), RE2's rules: a leading ']' is literal, POSIX classes expand. */
function charClass(p: string, i: number): { out: string; next: number } {
  let j = i + 1;
  let out = "[";
  if (p[j] === "^") {
    out += "^";
    j++;
  }
  if (p[j] === "]") {
    out += "\\]";
    j++;
  }
  while (j < p.length && p[j] !== "]") {
    const c = p[j] as string;
    if (c === "[" && p[j + 1] === ":") {
      const end = p.indexOf(":]", j + 2);
      const name = end < 0 ? "" : p.slice(j + 2, end);
      const set = posix[name];
      if (set === undefined) throw unsupported(p, `the POSIX class [:${name}:]`);
      out += set;
      j = end + 2;
    } else if (c === "\\") {
      const e = escapeAt(p, j + 1, true);
      out += e.out;
      j = e.next;
    } else if (c === "[") {
      out += "\\[";
      j++;
    } else {
      const ch = String.fromCodePoint(p.codePointAt(j) as number);
      out += ch;
      j += ch.length;
    }
  }
  if (j >= p.length) throw unsupported(p, "an unterminated character class");
  return { out: `${out}]`, next: j + 1 };
}
