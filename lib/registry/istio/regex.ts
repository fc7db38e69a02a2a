/**
 * A regex as istiod checks it (validateStringRegexp): at most 1024 bytes, then Go's regexp.Compile.
 * re2js is a port of RE2/J, itself a port of Go's regexp package, so its parser accepts what Go
 * accepts and refuses what Go refuses (lookarounds, backreferences, `\u`, nesting and repeat
 * limits, Unicode class names), with Go's own messages ("error parsing regexp: ..."). It replaces
 * a hand-written syntax checker that could only approximate Go's parser. Never JavaScript's RegExp:
 * its syntax differs from RE2's in both directions.
 */
import { RE2JS } from "re2js";
import { utf8Length } from "../../utf8.ts";

/** Istio's limit on a regex's length in bytes (it approximates Envoy's RE2 program size). */
export const maxRegexLength = 1024;

/** Why `re` is not a regex istiod accepts, in Go's words, or undefined when it is one. */
export function re2Problem(re: string): string | undefined {
  if (utf8Length(re) > maxRegexLength) return `regex is too large, max length allowed is ${maxRegexLength}`;
  try {
    RE2JS.compile(re);
    return undefined;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}
